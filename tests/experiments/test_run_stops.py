"""Run-level stops propagate out of `pvsst run` with their exit codes and keep
the trials that finished. (The budget stop through the command: ``test_study_runner.py::
test_budget_cap_stops_the_run_cleanly_with_exit_3``; here a budget that admits no call at all.)"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from runner_helpers import small_smoke_spec, trial_dirs

from pvsst.experiments.cli import main


def statuses(run: Path) -> dict[str, str]:
    return {trial: entry["status"]
            for trial, entry in json.loads((run / "manifest.json").read_text())["trials"].items()}


def test_replay_only_miss_exits_4_and_keeps_the_trials_that_finished(tmp_path, capfd):
    first = tmp_path / "first"
    assert main(["run", str(small_smoke_spec(tmp_path / "a", "[101]")), "--out", str(first)]) == 0
    # A new run of a larger design reuses the first run's cache: seed 101's trials replay, seed 211's miss.
    second = tmp_path / "second"
    second.mkdir()
    for name in ("cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm"):
        if (first / name).exists():
            shutil.copy(first / name, second / name)
    capfd.readouterr()
    code = main(["run", str(small_smoke_spec(tmp_path / "b", "[101, 211]")), "--out", str(second), "--replay-only"])
    out = capfd.readouterr().err  # a run that did not succeed says so on stderr
    assert code == 4, out
    assert "stopped: replay-only: no cached reply for model scripted/imitate" in out
    done = trial_dirs(second)
    # Run order is topic, seed, condition: ai_labels/101's four arms replay, then ai_labels/211/control misses.
    assert sorted(done) == sorted(f"scripted-imitate__ai_labels__101__{arm}"
                                  for arm in ("control", "likes", "single_source", "distributed_sources"))
    for trial_id, trial in done.items():  # the finished trials are the first run's, byte for byte
        for table in ("posts", "votes", "exposures"):
            assert ((trial / f"{table}.parquet").read_bytes()
                    == (first / "trials" / trial_id / f"{table}.parquet").read_bytes())
    status = statuses(second)
    assert status["scripted-imitate__ai_labels__211__control"] == "replay_miss"
    assert "failed" not in status.values()
    assert list(status.values()).count("done") == 4


def test_a_budget_that_admits_no_call_exits_3_and_writes_no_trial(tmp_path, capfd):
    spec = small_smoke_spec(tmp_path / "a", "[101]", extra="budget: {max_tokens: 0}\n")
    run = tmp_path / "run"
    code = main(["run", str(spec), "--out", str(run)])
    out = capfd.readouterr().err
    assert code == 3, out
    assert "stopped: LLM budget exceeded: spent 0 tokens of a 0-token cap" in out
    assert not (run / "trials").exists()
    assert list(statuses(run).values()).count("budget_exceeded") == 1
