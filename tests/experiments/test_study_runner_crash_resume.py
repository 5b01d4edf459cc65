"""SIGKILL at three moments loses nothing: a rerun resumes and the store equals an uninterrupted run's
(Ray executors: see the end)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from runner_helpers import assert_same_run_store, pool_reference_run, small_smoke_spec, trial_dirs

from pvsst.sim.llm.cache import ResponseCache


def _run_cmd(spec: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pvsst.experiments.cli", "run", str(spec), "--out", str(out), *extra]


def _kill_after(spec: Path, out: Path, done_at_least: int, timeout_s: float = 240) -> int:
    """Start a 2-worker run, SIGKILL its whole process group once `done_at_least` trials are DONE."""
    proc = subprocess.Popen(_run_cmd(spec, out, "--workers", "2"), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / "trials").is_dir() and len(trial_dirs(out)) >= done_at_least:
                break
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return len(trial_dirs(out)) if (out / "trials").is_dir() else 0


@pytest.mark.slow
def test_sigkill_at_three_moments_then_resume_equals_an_uninterrupted_run(tmp_path, tmp_path_factory):
    """``scripted_smoke`` cut to two seeds (16 trials in 4 blocks, each trial as in the 32-trial run), killed
    after its first trial, at three eighths and at three quarters; the uninterrupted run it must equal is
    the session's shared 32-trial pool run, restricted to these trials."""
    spec = small_smoke_spec(tmp_path / "spec", "[101, 211]", trial=None)

    crashed = tmp_path / "crashed"
    done_when_killed = [_kill_after(spec, crashed, n) for n in (1, 6, 12)]
    assert done_when_killed[0] < 16 and done_when_killed == sorted(done_when_killed), done_when_killed
    # leftovers of killed writes are never mistaken for finished trials
    finished = subprocess.run(_run_cmd(spec, crashed, "--workers", "2"), capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr
    summary = json.loads((crashed / "manifest.json").read_text())["runs"][-1]["summary"]
    skipped = done_when_killed[-1]
    assert summary.startswith(f"16 trials: {16 - skipped} done, 0 failed, {skipped} skipped"), (summary,
                                                                                               done_when_killed)

    reference = pool_reference_run(tmp_path_factory)  # the same spec, uninterrupted, same executor
    assert len(trial_dirs(reference)) == 32
    assert len(trial_dirs(crashed)) == 16
    assert_same_run_store(reference, crashed, part_of_a=True)
    for run in (reference, crashed):
        cache = ResponseCache(run / "cache.sqlite")
        assert cache.repeated_keys() == 0, (run.name, cache.repeated_keys())  # no finished call made twice
        assert len(cache) > 0
        cache.close()


# Ray against local: tests/experiments/test_ray_payloads.py (one machine) and tests/experiments/test_ray_cluster.py
# (worker nodes without the run folder, one of them killed mid-run).
