"""``pvsst`` as a Ray driver that also keeps the bytes of every task it submits.

Usage: ``python recording_driver.py FOLDER pvsst-arguments...``. Each block task handed to the Ray
executor is pickled (the bytes Ray ships: plans, spec, gateway settings, the cache server's actor
handle) into ``FOLDER/NNN.pkl`` before it is submitted; then the command runs as ``pvsst`` would and
exits with its code. ``tests/ray_namespace_cluster.py`` runs its cluster's drivers with it, so the
test can assert that no payload holds a path of the run; ``tests/experiments/test_ray_payloads.py`` records the
same way in-process (with pytest's ``monkeypatch.setattr``, undone after the test).
"""
from __future__ import annotations

import itertools
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def record_payloads(folder: Path, patch: Callable[[Any, str, Any], None] = setattr) -> None:
    """Make the Ray executor write each task's pickle to ``folder`` as it submits it (``patch`` sets the
    executor's wrapped methods: ``setattr`` for a driver process, ``monkeypatch.setattr`` in a test)."""
    from pvsst.experiments.run.executors import RayExecutor

    folder.mkdir(parents=True, exist_ok=True)
    numbers = itertools.count(len(list(folder.glob("*.pkl"))))

    def recorded(tasks):
        for task in tasks:
            (folder / f"{next(numbers):03d}.pkl").write_bytes(pickle.dumps(task))
            yield task

    real_map, real_streaming = RayExecutor.map, RayExecutor.map_streaming
    patch(RayExecutor, "map", lambda self, fn, tasks, **kw: real_map(self, fn, recorded(tasks), **kw))
    patch(RayExecutor, "map_streaming",
          lambda self, fn, tasks, **kw: real_streaming(self, fn, recorded(tasks), **kw))


def recorded_payloads(folder: Path) -> list[bytes]:
    """The pickles :func:`record_payloads` wrote to ``folder``, in submission order."""
    return [p.read_bytes() for p in sorted(folder.glob("*.pkl"))]


if __name__ == "__main__":
    from pvsst.experiments.cli import main

    record_payloads(Path(sys.argv[1]))
    sys.exit(main(sys.argv[2:]))
