"""Run folders under what only separate processes show: two runs started together on one folder, a reader of
stdout that goes away, and bombs refused within a memory limit and a time limit."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from runner_helpers import assert_same_run_store, small_smoke_spec, trial_dirs

# A process that imports pvsst, says it is ready, waits for the word go, then runs `pvsst ARGS`: two of them
# reach the run folder within milliseconds of each other, however long each took to start.
READY_THEN_RUN = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from pvsst.experiments.cli import main
    import pvsst.experiments.study.runner  # noqa: F401 - everything a run imports, before the start
    ready, go = Path(sys.argv[1]), Path(sys.argv[2])
    ready.write_text("ready")
    while not go.exists():
        time.sleep(0.005)
    sys.exit(main(sys.argv[3:]))
""")


@pytest.mark.slow
def test_two_runs_started_together_on_one_folder_one_runs_one_is_refused(tmp_path):
    spec = small_smoke_spec(tmp_path / "spec", "[101]", topics="[ai_labels]")
    run, go = tmp_path / "run", tmp_path / "go"
    processes = []
    for name in ("a", "b"):
        ready = tmp_path / f"ready-{name}"
        processes.append((ready, subprocess.Popen(
            [sys.executable, "-c", READY_THEN_RUN, str(ready), str(go), "run", str(spec), "--out", str(run)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    deadline = time.time() + 300
    while not all(ready.exists() for ready, _ in processes) and time.time() < deadline:
        time.sleep(0.02)
    go.write_text("go")
    results = [(process.wait(timeout=600), *process.communicate()) for _, process in processes]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 2], results
    refused = next(err for code, _, err in results if code == 2).strip()
    assert len(refused.splitlines()) == 1 and "another pvsst process is using this run folder (pid" in refused
    # the store is one run's: the same trials as a run alone, every call made once, one session on record
    alone = tmp_path / "alone"
    from pvsst.experiments.cli import main

    assert main(["run", str(spec), "--out", str(alone)]) == 0
    assert_same_run_store(alone, run)
    calls = pd.concat(pd.read_parquet(trial / "llm_calls.parquet") for trial in trial_dirs(run).values())
    assert calls["call_id"].is_unique and len(calls) == sum(
        len(pd.read_parquet(trial / "llm_calls.parquet")) for trial in trial_dirs(alone).values())
    assert len(json.loads((run / "manifest.json").read_text())["runs"]) == 1
    from pvsst.sim.llm.cache import ResponseCache

    with ResponseCache(run / "cache.sqlite") as cache:
        assert cache.repeated_keys() == 0


def test_a_reader_of_stdout_that_goes_away_does_not_stop_the_run(tmp_path, monkeypatch):
    """``pvsst run ... | head -c1``: stdout is a pipe whose reader is gone (every write fails with EPIPE)."""
    from pvsst.experiments.cli import main

    spec = small_smoke_spec(tmp_path / "spec", "[101]", topics="[ai_labels]")
    read_end, write_end = os.pipe()
    os.close(read_end)
    stdout = os.fdopen(write_end, "w", buffering=1)
    monkeypatch.setattr(sys, "stdout", stdout)
    try:
        assert main(["run", str(spec), "--out", str(tmp_path / "run")]) == 0
    finally:
        monkeypatch.undo()
        try:
            stdout.close()
        except OSError:
            pass
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["finished_at"] and manifest["runs"][-1]["summary"].startswith("4 trials: 4 done")


# Imports first, then allows itself 200 MB more address space than it holds, then times each refusal.
BOUNDED_FREEZE = textwrap.dedent("""
    import json, resource, sys, time
    from pvsst.core.errors import InputError
    from pvsst.experiments.prereg.freeze import freeze
    import pvsst.experiments.study.files, pvsst.sim.network  # noqa: F401 - what freezing a study imports
    size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (size + 200 * 2**20, resource.RLIM_INFINITY))
    for spec in sys.argv[1:]:
        started = time.perf_counter()
        try:
            freeze(spec)
            outcome = "frozen"
        except InputError as err:
            outcome = str(err)
        except MemoryError:
            outcome = "MemoryError"
        print(json.dumps({"outcome": outcome, "seconds": time.perf_counter() - started}))
""")


@pytest.mark.skipif(not Path("/proc/self/statm").exists() or not Path("/dev/urandom").exists(),
                    reason="needs Linux's /proc and /dev/urandom")
def test_a_billion_laughs_and_dev_urandom_are_refused_in_under_2_s_and_200_mb(tmp_path):
    spec = small_smoke_spec(tmp_path / "spec", "[101]", topics="[ai_labels]")
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi")]
    laughs = spec.with_name("laughs.yaml")  # 9**9 = 387,420,489 strings once expanded
    laughs.write_text(spec.read_text().replace("description:",
                                               "title_bomb:\n" + "".join(f"  {line}\n" for line in lines)
                                               + "description:"))
    urandom = spec.with_name("urandom.yaml")
    urandom.write_text(spec.read_text().replace(
        "trial: {n_agents: 4, n_rounds: 2}",
        "trial: {n_agents: 4, n_rounds: 2, network: {kind: edgelist, path: /dev/urandom}}"))
    done = subprocess.run([sys.executable, "-c", BOUNDED_FREEZE, str(laughs), str(urandom)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.strip().splitlines()[-2:]]
    for result, phrase in zip(results, ("expands to more than 200,000 values",
                                        "trial.network.path: a device, not a regular file")):
        assert phrase in result["outcome"] and result["seconds"] < 2.0, result
