"""The runner refuses unfrozen / changed specs, records deviations, resumes, and its call
count matches `pvsst estimate`."""
from __future__ import annotations

import json

import pandas as pd
from cli_checks import error_line
from runner_helpers import frozen_copy, trial_dirs

from pvsst.experiments.cli import main
from pvsst.experiments.spec.estimate import estimate
from pvsst.experiments.spec.study import load_spec


def test_run_refuses_unfrozen_spec(tmp_path, capfd):
    spec = frozen_copy(tmp_path, freeze_it=False)
    code = main(["run", str(spec), "--out", str(tmp_path / "run")])
    assert code == 2 and "not frozen" in error_line(capfd)
    assert not (tmp_path / "run").exists()


def test_changed_spec_needs_a_deviation_which_is_recorded(tmp_path, capfd):
    spec = frozen_copy(tmp_path, edit=("topics: [ai_labels, identity_verification]", "topics: [ai_labels]"))
    lock = json.loads((tmp_path / "scripted_smoke.yaml.lock.json").read_text())
    code = main(["run", str(spec), "--out", str(tmp_path / "run")])
    err = error_line(capfd)
    assert code == 2 and "hash mismatch" in err and lock["spec_sha256"][:12] in err
    assert not (tmp_path / "run").exists()

    why = "one topic only: smoke test of the deviation path"
    code = main(["run", str(spec), "--out", str(tmp_path / "run"), "--deviation", why])
    assert code == 0, capfd.readouterr().err
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    (deviation,) = manifest["deviations"]
    assert deviation["text"] == why
    assert deviation["frozen_sha256"] == lock["spec_sha256"]
    assert deviation["current_sha256"] == manifest["spec_sha256"] != lock["spec_sha256"]
    assert any("factors.topics" in change for change in deviation["changed_fields"])
    assert len(trial_dirs(tmp_path / "run")) == 16  # 1 topic x 4 seeds x 4 arms


def test_run_then_resume_skips_done_trials_and_counts_calls_like_estimate(tmp_path, capfd):
    spec = frozen_copy(tmp_path)
    run = tmp_path / "run"
    assert main(["run", str(spec), "--out", str(run)]) == 0
    out = capfd.readouterr().out
    assert "32 trials: 32 done, 0 failed, 0 skipped" in out
    manifest = json.loads((run / "manifest.json").read_text())
    assert {t["status"] for t in manifest["trials"].values()} == {"done"}
    calls = sum(len(pd.read_parquet(d / "llm_calls.parquet")) for d in trial_dirs(run).values())
    assert calls == estimate(load_spec(spec)).calls == 4848

    assert main(["run", str(spec), "--out", str(run)]) == 0
    assert "32 trials: 0 done, 0 failed, 32 skipped; 0 calls" in capfd.readouterr().out
    assert len(json.loads((run / "manifest.json").read_text())["runs"]) == 2


def test_replay_only_rerun_of_a_finished_study_makes_no_provider_call(tmp_path, capfd):
    spec = frozen_copy(tmp_path, edit=("topics: [ai_labels, identity_verification]", "topics: [ai_labels]"))
    from pvsst.experiments.prereg.freeze import freeze

    freeze(spec, force=True)
    first = tmp_path / "first"
    assert main(["run", str(spec), "--out", str(first)]) == 0
    # A second run directory reusing the first one's cache file replays everything.
    second = tmp_path / "second"
    second.mkdir()
    (second / "cache.sqlite").write_bytes((first / "cache.sqlite").read_bytes())
    for suffix in ("-wal", "-shm"):
        if (first / f"cache.sqlite{suffix}").exists():
            (second / f"cache.sqlite{suffix}").write_bytes((first / f"cache.sqlite{suffix}").read_bytes())
    capfd.readouterr()
    assert main(["run", str(spec), "--out", str(second), "--replay-only"]) == 0
    for trial in trial_dirs(second).values():
        calls = pd.read_parquet(trial / "llm_calls.parquet")
        assert calls["cached"].all()


def test_budget_cap_stops_the_run_cleanly_with_exit_3(tmp_path, capfd):
    """A cap below what the job needs stops it with one line and exit code 3;
    the spend exceeds the cap by at most one in-flight batch; finished trials stay finished."""
    import re

    from pvsst.experiments.prereg.freeze import freeze

    cap = 60_000  # a scripted trial of this spec spends ~40,000 tokens (whitespace words)
    spec = frozen_copy(tmp_path, edit=("execution:\n", f"budget:\n  max_tokens: {cap}\n\nexecution:\n"))
    freeze(spec, force=True)
    run = tmp_path / "run"
    code = main(["run", str(spec), "--out", str(run)])
    out = capfd.readouterr().err  # a stop is said on stderr
    assert code == 3, out
    (line,) = [l for l in out.splitlines() if "stopped:" in l]
    spent = int(re.search(r"spent (\d+) tokens of a (\d+)-token cap", line).group(1))
    max_concurrency, biggest_call = 16, 1_000
    assert cap <= spent <= cap + max_concurrency * biggest_call
    done = trial_dirs(run)
    assert 0 < len(done) < 32
    manifest = json.loads((run / "manifest.json").read_text())
    statuses = [t["status"] for t in manifest["trials"].values()]
    assert statuses.count("budget_exceeded") == 1 and statuses.count("done") == len(done)
    assert manifest["finished_at"] is None  # the run is not complete: rerunning with a larger cap resumes
