"""Ray on worker nodes that do not share the driver's filesystem.

The cluster (``ray_namespace_cluster.py``) runs in network, PID and mount namespaces of its own: a head
with no CPUs and two 1-CPU worker nodes, each with an empty tmpfs over the folder of the runs. The
32-trial ``scripted_smoke`` run's store, as the driver sees it, must equal the local executor's; then one
worker node is killed mid-run, and after a rerun the store equals it again with no cached call repeated.
Last, a study whose spec, materials directory, edge list and census persona pool lie in that hidden
folder runs on the worker nodes from the bytes its block tasks carry, and equals its local run. The
drivers keep every block task they submit (``recording_driver.py``): no payload holds a path of the run.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from ray_namespace_cluster import cluster_unavailable
from recording_driver import recorded_payloads
from runner_helpers import assert_same_run_store, frozen_copy, pool_reference_run, study_with_own_files, trial_dirs

from pvsst.experiments.prereg.freeze import freeze
from pvsst.sim.llm.cache import ResponseCache

ROOT = Path(__file__).resolve().parents[2]
HELPER = Path(__file__).parents[1].joinpath("ray_namespace_cluster.py")
CENSUS_POOL = "personas: {source: census, n: 60, geography: US, seed: 5}\n"


def _study_with_a_census_pool(folder: Path) -> Path:
    """``study_with_own_files`` whose personas are a census pool the driver draws into the run directory
    (``personas.parquet``): the block tasks must carry the table, not its path."""
    spec = study_with_own_files(folder)
    text = spec.read_text()
    assert "\nexecution:\n" in text
    spec.write_text(text.replace("\nexecution:\n", f"\n{CENSUS_POOL}execution:\n", 1))
    freeze(spec, force=True)
    return spec


def _stored(run: Path) -> tuple[int, int, int]:
    """(entries, keys stored more than once, provider calls that were stored: the sum of `stores`)."""
    cache = ResponseCache(run / "cache.sqlite")
    try:
        total = int(cache._conn.execute("SELECT COALESCE(SUM(stores), 0) FROM responses").fetchone()[0])
        return len(cache), cache.repeated_keys(), total
    finally:
        cache.close()


def _new_calls(trials: list[Path]) -> int:
    """Provider calls (not replayed from the cache) recorded by these finished trials."""
    return sum(int((~pd.read_parquet(t / "llm_calls.parquet")["cached"]).sum()) for t in trials)


@pytest.mark.slow
def test_worker_nodes_without_the_run_folder_and_a_node_killed_mid_run(tmp_path, tmp_path_factory):
    reason = cluster_unavailable()
    if reason:
        pytest.skip(reason)
    spec = frozen_copy(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    runs = tmp_path / "runs"
    runs.mkdir()
    study = _study_with_a_census_pool(runs / "study")
    result = tmp_path / "cluster.json"
    # The cluster spends much of its time waiting (node start, health checks): the local runs it is
    # compared with are made meanwhile.
    namespaces = ["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc"]
    log = tmp_path / "cluster.log"
    with log.open("w") as sink, subprocess.Popen([*namespaces, sys.executable, str(HELPER), str(spec), str(runs),
                                                  str(result), str(study)], stdout=sink, stderr=subprocess.STDOUT,
                                                 env=env, cwd=tmp_path) as proc:
        try:
            local = pool_reference_run(tmp_path_factory)  # the same spec by the local executor (--workers 2)
            subprocess.run([sys.executable, "-m", "pvsst.experiments.cli", "run", str(study), "--out",
                            str(tmp_path / "study-local")], check=True, capture_output=True, timeout=600, env=env)
            proc.wait(timeout=1500)
        except BaseException:
            proc.kill()  # unshare: --kill-child ends the namespace's init, and with it the whole cluster
            raise
    assert proc.returncode == 0, log.read_text()[-3000:]
    report = json.loads(result.read_text())

    # The worker nodes really lack the driver's run folder: each sees an empty tmpfs there.
    cluster = report["cluster"]
    assert cluster.get("worker_nodes") == 2, cluster
    assert cluster["seen"] == [{"entries": [], "sees_sentinel": False}] * 2, cluster
    # A cache server for a file the driver's node lacks (a driver off the cluster) fails in one line.
    assert cluster["cache_elsewhere"].startswith("--ray-address: cache: the run's cache server could not open "
                                                 "the driver's cache file"), cluster

    # Every block ran on a worker node, and the driver's store equals the local one.
    clean = report["clean"]
    assert clean["rc"] == 0, clean["tail"]
    assert "32 trials: 32 done, 0 failed" in clean["tail"], clean["tail"]
    assert len(trial_dirs(runs / "clean")) == 32
    assert_same_run_store(local, runs / "clean")
    # One task per block (topic x seed: 8), none holding a path of the run or of the folder it lies in.
    clean_payloads = recorded_payloads(tmp_path / "payloads" / "clean")
    assert len(clean_payloads) == 8
    for payload in clean_payloads:
        assert str(tmp_path).encode() not in payload and b"cache.sqlite" not in payload
    local_entries, _, _ = _stored(local)
    entries, repeated, provider_calls = _stored(runs / "clean")
    assert (entries, repeated, provider_calls) == (local_entries, 0, local_entries)

    # A worker node killed mid-run. That attempt either finished on the other node (the
    # driver resubmits the lost block's trials not yet back; they replay their cached calls) or reports
    # the lost trials as failed (exit 1): it never claims trials it did not write.
    killed, rerun = report["killed"], report["rerun"]
    at_kill = killed["at_kill"]
    assert at_kill["run_still_going"] and 4 <= len(at_kill["done"]) < 32, at_kill
    assert at_kill["killed_processes"] >= 2, at_kill  # the raylet and at least one worker
    after_first = killed["tail"]
    if killed["rc"] == 0:
        assert "32 trials: 32 done, 0 failed" in after_first, after_first
    else:
        assert killed["rc"] == 1 and "failed" in after_first, after_first
    # Calls of the trials in flight reached the driver's cache as they finished, before any trial of
    # theirs was done: more entries than the finished trials account for.
    done_at_kill = [runs / "killed" / "trials" / t for t in at_kill["done"]]
    assert at_kill["cache_entries"] > _new_calls(done_at_kill), at_kill

    assert rerun["rc"] == 0, rerun["tail"]
    assert len(trial_dirs(runs / "killed")) == 32
    assert_same_run_store(local, runs / "killed")
    entries, repeated, provider_calls = _stored(runs / "killed")
    # Over both attempts: no stored call was made twice, so the provider calls equal a clean run's
    # (at most a clean run's plus the calls of the trials in flight).
    assert (entries, repeated, provider_calls) == (local_entries, 0, local_entries)

    # The study's own files lie in the folder no worker node sees: the blocks ran from their bytes.
    assert report["study"]["rc"] == 0, report["study"]["tail"]
    assert "8 trials: 8 done, 0 failed" in report["study"]["tail"], report["study"]["tail"]
    assert_same_run_store(tmp_path / "study-local", runs / "study-ray")
    study_payloads = recorded_payloads(tmp_path / "payloads" / "study")
    assert len(study_payloads) == 2  # seed 101 x 2 topics
    for payload in study_payloads:
        assert str(tmp_path).encode() not in payload  # no spec, materials, edge list or run path
        assert b"cache.sqlite" not in payload and b"personas.parquet" not in payload
        assert b"persona_id" in payload  # the census pool's table itself travels
    assert (runs / "study-ray" / "personas.parquet").is_file()  # drawn and written by the driver
