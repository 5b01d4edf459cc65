"""On one machine: Ray tasks carry plain data (no path of the run) and the driver
alone writes the run store; the store equals the local executor's.

Where the namespace cluster of ``tests/experiments/test_ray_cluster.py`` can run (root, unshare), it makes the same
checks on worker nodes that lack the run folder (its drivers keep every task they submit), and the
one-machine Ray run here is skipped: it would start a second Ray for nothing new.
"""
from __future__ import annotations

import os
import shutil

import pytest
from ray_namespace_cluster import cluster_unavailable
from recording_driver import record_payloads, recorded_payloads
from runner_helpers import assert_same_run_store, small_smoke_spec

from pvsst.core.errors import InputError
from pvsst.experiments.run.executors import LocalExecutor
from pvsst.experiments.run.ray_cache import start_cache_server
from pvsst.experiments.run.worker_gateway import GatewaySettings
from pvsst.experiments.spec.design import expand
from pvsst.experiments.spec.study import load_spec
from pvsst.experiments.study.blocks import BlockTask, BlockWorker
from pvsst.experiments.study.runner import run_study
from pvsst.sim.llm.cache import ResponseCache


def eight_trial_spec(tmp_path):
    """1 topic x 2 seeds x 4 arms = 8 trials in 2 blocks, with a census persona pool (a table the driver
    makes in the run directory: workers must get the table, not its path)."""
    return small_smoke_spec(tmp_path / "spec", "[101, 211]", topics="[ai_labels]", trial=None,
                            extra="personas: {source: census, n: 60, geography: US, seed: 5}\n")


@pytest.mark.slow
def test_ray_task_payloads_hold_no_run_path_and_the_store_equals_local(tmp_path, monkeypatch):
    ray = pytest.importorskip("ray", reason="the ray extra is part of pvsst[dev]")
    if cluster_unavailable() is None:
        pytest.skip("checked on worker nodes without the run folder by tests/experiments/test_ray_cluster.py")
    spec = eight_trial_spec(tmp_path)
    local, ray_run = tmp_path / "local", tmp_path / "ray-run"
    assert run_study(spec, local, workers=1, progress=False).exit_code == 0

    payloads = tmp_path / "payloads"
    record_payloads(payloads, monkeypatch.setattr)  # the bytes Ray ships (actor handle included)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)  # one Ray for both runs below
    try:
        _ray_runs(spec, local, ray_run, payloads)
        # A cache server that does not see the driver's file (a driver off the cluster) is one line.
        with pytest.raises(InputError, match="could not open the driver's cache file"):
            start_cache_server(ray, str(tmp_path / "elsewhere" / "cache.sqlite"))
    finally:
        ray.shutdown()


def _ray_runs(spec, local, ray_run, payloads):
    summary = run_study(spec, ray_run, executor="ray", workers=2, progress=False)
    assert summary.exit_code == 0 and summary.done == 8, summary.line()

    first = recorded_payloads(payloads)
    assert len(first) == 2  # one task per block (the runs below add their own)
    run_path = str(ray_run.resolve()).encode()
    for payload in first:
        assert run_path not in payload
        assert b"cache.sqlite" not in payload and b"personas.parquet" not in payload
        assert b"persona_id" in payload  # the persona table itself travels
    assert (ray_run / "personas.parquet").is_file()
    assert_same_run_store(local, ray_run)
    for run in (local, ray_run):
        cache = ResponseCache(run / "cache.sqlite")
        assert len(cache) > 0 and cache.repeated_keys() == 0, run.name
        cache.close()
    shutil.rmtree(ray_run / "trials")
    # the same run again (a resume of nothing done): every call replays from the driver's cache
    again = run_study(spec, ray_run, executor="ray", workers=2, progress=False)
    assert again.done == 8 and again.calls > 0 and again.cache_hits == again.calls, again.line()
    assert_same_run_store(local, ray_run)


def _worker_dies(task):
    os._exit(3)  # the worker process ends without a reply, as when its machine goes away


def test_a_block_whose_worker_died_comes_back_as_failed_trials(tmp_path):
    plans = expand(load_spec(eight_trial_spec(tmp_path))).trials[:4]
    task = BlockTask(spec={}, plans=tuple(plans),
                     gateway=GatewaySettings(cache_path=str(tmp_path / "cache.sqlite")))
    executor = LocalExecutor(1)
    try:
        outcomes = list(executor.map(_worker_dies, [task, task], on_error=BlockWorker().lost))
    finally:
        executor.close()
    assert len(outcomes) == 2  # the second task meets the broken pool and fails the same way
    for block in outcomes:
        assert [o.unit_id for o in block] == [p.trial_id for p in plans]
        assert {o.status for o in block} == {"failed"}
        assert all(o.error.startswith("worker lost: BrokenProcessPool") for o in block), block[0].error
