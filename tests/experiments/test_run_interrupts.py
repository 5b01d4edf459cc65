"""Ctrl-C and SIGTERM stop a run with one line and a truthful exit code; a rerun resumes it exactly.

The signal goes to the whole process group, as a terminal sends Ctrl-C: the driver and its two pool
workers receive it together.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import yaml
from runner_helpers import assert_same_run_store, pool_reference_run, small_smoke_spec, trial_dirs
from stop_signals import default_stop_signals

from pvsst.experiments.cli import main
from pvsst.experiments.prereg.freeze import freeze

pytestmark = pytest.mark.slow

GSS = Path(__file__).resolve().parents[2] / "experiments" / "surveys" / "gss2018_spending.yaml"


def _cli(*args) -> list[str]:
    return [sys.executable, "-m", "pvsst.experiments.cli", *map(str, args)]


def _finished(folder: Path) -> int:
    return sum(1 for d in folder.glob("*/DONE")) if folder.is_dir() else 0


def _signal_at(command: Callable[[Path], list[str]], out: Path, section: str, at: int, signum: int,
               attempts: int = 3, timeout_s: float = 300) -> tuple[Path, subprocess.CompletedProcess]:
    """Run ``command(out)`` in a process group of its own, with SIGINT and SIGTERM at their defaults (as a
    terminal starts it, even when this session runs as a background job); send ``signum`` to the group
    once ``at`` units are finished under ``out / section``; return the run folder and the finished process
    with its stderr.

    This process shares two cores with the rest of the suite and may look at the folder late, even after
    the run has ended. When it finds more than ``2 * at`` units finished, the run is killed and made again
    in a new folder (``out`` with ``-2``, ``-3``): a signal sent that late might reach a run that is already
    leaving and show nothing."""
    for attempt in range(1, attempts + 1):
        folder = out if attempt == 1 else out.with_name(f"{out.name}-{attempt}")
        proc = subprocess.Popen(command(folder), start_new_session=True, preexec_fn=default_stop_signals,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and proc.poll() is None and _finished(folder / section) < at:
            time.sleep(0.01)
        finished = _finished(folder / section)
        late = finished > 2 * at
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL if late or finished < at else signum)
        _, err = proc.communicate(timeout=120)
        assert finished >= at, f"the run ended or timed out with {finished} of the {at} units awaited: {err}"
        if not late:
            return folder, subprocess.CompletedProcess(proc.args, proc.returncode, "", err)
    raise AssertionError(f"in {attempts} attempts this process never saw the run with {at} to {2 * at} units "
                         f"finished (last: {finished})")


def _assert_one_line(stopped: subprocess.CompletedProcess, code: int, name: str, unit: str) -> None:
    lines = stopped.stderr.strip().splitlines()
    assert stopped.returncode == code, stopped.stderr
    assert "Traceback" not in stopped.stderr and "KeyboardInterrupt" not in stopped.stderr, stopped.stderr
    assert 1 <= len(lines) <= 3, stopped.stderr
    assert f"pvsst: interrupted by {name}:" in lines[-1] and f"{unit} finished" in lines[-1], lines
    assert "resume with: pvsst " in lines[-1], lines


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_signal_at_a_third_of_a_two_worker_study_stops_it_and_a_rerun_resumes(tmp_path, tmp_path_factory,
                                                                                  signum, code):
    """``scripted_smoke`` cut to two seeds (16 trials in 4 blocks, each trial as in the 32-trial run): the
    uninterrupted run it must equal is the session's shared 32-trial pool run, restricted to these trials."""
    spec = small_smoke_spec(tmp_path / "spec", "[101, 211]", trial=None)
    out, stopped = _signal_at(lambda folder: _cli("run", spec, "--out", folder, "--workers", "2"), tmp_path / "run",
                              "trials", 16 // 3, signum)
    _assert_one_line(stopped, code, signal.Signals(signum).name, "trials")
    manifest = json.loads((out / "manifest.json").read_text())
    interrupted = manifest["runs"][-1]["interrupted"]
    assert interrupted["signal"] == signal.Signals(signum).name and interrupted["total"] == 16
    assert 16 // 3 <= interrupted["finished"] < 16 and interrupted["finished"] <= len(trial_dirs(out))

    rerun = subprocess.run(_cli("run", spec, "--out", out, "--workers", "2"), capture_output=True, text=True,
                           timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert not list((out / "trials").glob(".*")), "a staging directory survived the rerun"
    assert len(trial_dirs(out)) == 16
    assert_same_run_store(pool_reference_run(tmp_path_factory), out, part_of_a=True)


def _survey(folder: Path) -> Path:
    spec = yaml.safe_load(GSS.read_text())
    spec["questions"] = spec["questions"][:3]
    spec.update(model="scripted/imitate", conditions=["direct", "persona_label"])
    spec["personas"].update(source="respondents", n=30)
    spec["execution"].update(chunk_size=3, workers=2)
    path = folder / "survey.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    freeze(path)
    return path


def _responses(run: Path) -> pd.DataFrame:
    frames = [pd.read_parquet(d / "responses.parquet") for d in sorted((run / "units").iterdir())
              if not d.name.startswith(".")]
    return pd.concat(frames).drop(columns=["cached", "attempts", "latency_s"]).reset_index(drop=True)


def test_sigint_at_a_third_of_a_two_worker_survey_stops_it_and_a_rerun_resumes(tmp_path):
    spec = _survey(tmp_path)
    clean = tmp_path / "clean"
    total = 5 * 10  # (1 model x 2 conditions + 3 controls) x 10 chunks of 3 personas
    out, stopped = _signal_at(lambda folder: _cli("survey", "run", spec, "--out", folder), tmp_path / "run", "units",
                              total // 3, signal.SIGINT)
    _assert_one_line(stopped, 130, "SIGINT", "units")
    interrupted = json.loads((out / "manifest.json").read_text())["runs"][-1]["interrupted"]
    assert interrupted["total"] == total and total // 3 <= interrupted["finished"] < total

    done = subprocess.run(_cli("survey", "run", spec, "--out", out), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    # The uninterrupted run is made in this process, unit after unit: responses do not depend on the
    # executor, so the resumed two-worker run must equal it too (and no interpreter is started for it).
    assert main(["survey", "run", str(spec), "--out", str(clean), "--workers", "1"]) == 0
    assert _finished(out / "units") == _finished(clean / "units") == total
    pd.testing.assert_frame_equal(_responses(out), _responses(clean))
