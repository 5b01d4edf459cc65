"""``pvsst`` as a Ray driver that also keeps the bytes of every task it submits.

Usage: ``python recording_driver.py FOLDER pvsst-arguments...``. Each block task handed to the Ray
executor is pickled (the bytes Ray ships: plans, spec, gateway settings, the cache server's actor
handle) into ``FOLDER/NNN.pkl`` before it is submitted; then the command runs as ``pvsst`` would and
exits with its code. ``tests/ray_namespace_cluster.py`` runs its cluster's drivers with it, so the
test can assert that no payload holds a path of the run.
"""
from __future__ import annotations

import itertools
import pickle
import sys
from pathlib import Path


def record_payloads(folder: Path) -> None:
    """Make the Ray executor write each task's pickle to ``folder`` as it submits it."""
    from experiments.run.executors import RayExecutor

    folder.mkdir(parents=True, exist_ok=True)
    numbers = itertools.count(len(list(folder.glob("*.pkl"))))

    def recorded(tasks):
        for task in tasks:
            (folder / f"{next(numbers):03d}.pkl").write_bytes(pickle.dumps(task))
            yield task

    real_map, real_streaming = RayExecutor.map, RayExecutor.map_streaming
    RayExecutor.map = lambda self, fn, tasks, **kw: real_map(self, fn, recorded(tasks), **kw)
    RayExecutor.map_streaming = lambda self, fn, tasks, **kw: real_streaming(self, fn, recorded(tasks), **kw)


if __name__ == "__main__":
    from experiments.cli import main

    record_payloads(Path(sys.argv[1]))
    sys.exit(main(sys.argv[2:]))
