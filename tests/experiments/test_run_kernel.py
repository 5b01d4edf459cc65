"""The run kernel on its own, with a fake executor and fake units: it plans the units, skips the
finished ones, records each unit's status in the manifest, tallies one summary whose exit code follows
the one rule, stops at a run-level stop, and is the only writer of the run store (a worker returns
data; nothing appears under the unit folder until the kernel writes it)."""
from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from pvsst.core.errors import InputError
from pvsst.experiments.run import kernel
from pvsst.experiments.run.kernel import RunJob, UnitResult, run_units
from pvsst.experiments.run.manifest import RunManifest
from pvsst.experiments.run.summary import RunSummary
from pvsst.experiments.run.worker_gateway import GatewaySettings

ROOT = Path(__file__).resolve().parents[2]
# unit id -> what its (fake) worker returns
SCRIPT = {
    "u1": dict(status="done", calls=4, cache_hits=1, cost_usd=0.25, tokens=40),
    "u2": dict(status="failed", error="ValueError: bad persona"),
    "u3": dict(status="done", calls=10, failed_calls=5),            # 50% failed > 5%: degraded
    "u4": dict(status="done", calls=2),
}


class FakeExecutor:
    """Runs payloads in this process and records what it ran; checks the store is untouched meanwhile."""

    def __init__(self, run_dir: Path):
        self.run_dir, self.ran, self.closed = run_dir, [], None

    def share_cache(self, settings):
        return settings

    def map(self, fn, payloads, on_error=None):
        for payload in payloads:
            before = sorted(p.name for p in (self.run_dir / "units").glob("*"))
            results = fn(payload)
            assert sorted(p.name for p in (self.run_dir / "units").glob("*")) == before  # the worker wrote nothing
            self.ran.append(payload)
            yield results

    def close(self, abort=False):
        self.closed = "abort" if abort else "clean"


def fake_work(unit_id: str) -> list[UnitResult]:
    fields = SCRIPT[unit_id]
    tables = {"responses": pd.DataFrame({"unit": [unit_id]})} if fields["status"] == "done" else None
    return [UnitResult(unit_id, tables=tables, files={"note.txt": unit_id} if tables else None, **fields)]


@pytest.fixture
def fake(monkeypatch, tmp_path):
    executors = []

    def make(kind, workers, address=None):
        executors.append(FakeExecutor(tmp_path / "run"))
        return executors[-1]

    monkeypatch.setattr(kernel, "make_executor", make)
    return executors


class FunctionWorker:
    """A worker whose ``run`` is the given function (the kernel's tests script each unit's result)."""

    def __init__(self, work):
        self.run = work

    def lost(self, unit_id, error):
        return kernel.lost_units([unit_id], error)


def job(run_dir: Path, unit_ids=tuple(SCRIPT), work=fake_work) -> RunJob:
    manifest = RunManifest.open(run_dir)
    return RunJob(run_dir=run_dir, manifest=manifest, section="units", what="demo run", label="demo",
                  unit_ids=list(unit_ids), worker=FunctionWorker(work),
                  prepare=lambda job: lambda pending, summary, each, gw: list(pending),
                  gateway=GatewaySettings(cache_path=None), summary=RunSummary(total=len(unit_ids)),
                  command=["demo"], threshold=0.05, progress=False)


def test_units_run_and_their_statuses_summary_and_exit_code(tmp_path, fake):
    run = tmp_path / "run"
    summary = run_units(job(run))
    assert fake[0].ran == ["u1", "u2", "u3", "u4"] and fake[0].closed == "clean"
    assert (summary.done, summary.failed, summary.skipped, summary.calls, summary.cache_hits) == (2, 1, 0, 16, 1)
    assert summary.cost_usd == 0.25 and summary.tokens == 40
    assert summary.failures == ["u2: ValueError: bad persona"]
    assert summary.degraded == ["u3: 50.0% of 10 calls failed (threshold 5.0%)"]
    assert summary.status == 1 and summary.exit_code == 1  # failed and degraded units: exit 1
    manifest = json.loads((run / "manifest.json").read_text())
    statuses = {unit: entry["status"] for unit, entry in manifest["units"].items()}
    assert statuses == {"u1": "done", "u2": "failed", "u3": "degraded", "u4": "done"}
    assert (manifest["units"]["u3"]["failed_share"] == 0.5
            and manifest["units"]["u2"]["error"] == "ValueError: bad persona")
    assert manifest["runs"][-1]["summary"] == summary.line() and manifest["finished_at"] is None  # u2 is not DONE
    assert sorted(p.name for p in (run / "units").iterdir()) == ["u1", "u3", "u4"]
    assert sorted(p.name for p in (run / "units" / "u1").iterdir()) == ["DONE", "note.txt", "responses.parquet"]


def test_a_rerun_skips_finished_units_and_a_degraded_one_stays_degraded(tmp_path, fake):
    run = tmp_path / "run"
    run_units(job(run))
    SCRIPT_FIXED = dict(SCRIPT, u2=dict(status="done", calls=3))
    summary = run_units(job(run, work=lambda unit_id: [UnitResult(unit_id, tables={"t": pd.DataFrame({"x": [1]})},
                                                                  **SCRIPT_FIXED[unit_id])]))
    assert fake[1].ran == ["u2"]  # only the unit without DONE
    assert (summary.skipped, summary.done, summary.failed) == (3, 1, 0)
    assert summary.degraded == ["u3: 50.0% of 10 calls failed (threshold 5.0%)"] and summary.status == 1
    manifest = RunManifest.load(run)
    assert manifest.units("units")["u2"]["status"] == "done" and manifest.get("finished_at") is not None
    assert len(manifest.get("runs")) == 2


def test_a_run_level_stop_ends_the_run_with_its_exit_code(tmp_path, fake):
    stop = dict(SCRIPT, u2=dict(status="replay_miss", error="no cached reply"))
    summary = run_units(job(tmp_path / "run", work=lambda u: [UnitResult(u, **stop[u])]))
    assert fake[0].ran == ["u1", "u2"] and summary.stopped == "no cached reply"
    assert summary.exit_code == summary.status == 4
    assert "stopped: no cached reply" in RunManifest.load(tmp_path / "run").current_run["summary"]


def test_a_refusal_while_preparing_leaves_no_session_entry(tmp_path, fake):
    run = tmp_path / "run"
    run_units(job(run))
    before = json.loads((run / "manifest.json").read_text())

    def refuse(job):
        raise InputError(run / "materials", "materials", "changed since the spec was frozen")

    refused = job(run)
    refused.prepare = refuse
    with pytest.raises(InputError):
        run_units(refused)
    assert json.loads((run / "manifest.json").read_text()) == before
    assert len(before["runs"]) == 1


def test_an_exception_in_the_loop_aborts_the_executor(tmp_path, fake):
    def broken(unit_id):
        raise RuntimeError("a bug")

    with pytest.raises(RuntimeError):
        run_units(job(tmp_path / "run", work=broken))
    assert fake[0].closed == "abort"


def test_the_compositions_are_short_and_the_manifest_is_changed_through_methods():
    from pvsst.experiments.study.runner import run_study
    from pvsst.experiments.survey.runner import run_survey

    for function in (run_study, run_survey):
        assert len(inspect.getsourcelines(function)[0]) < 40, function.__name__
    survey = (ROOT / "experiments/survey/runner.py").read_text()
    assert "experiments.study.runner" not in survey  # the summary and the freeze check are the kernel's
    for module in (ROOT / "experiments/run").glob("*.py"):  # the kernel knows no job
        assert not re.search(r"^from pvsst\.experiments\.(survey|study|audit|judge)\b", module.read_text(),
                             re.M), module
    for path in (ROOT / "experiments").rglob("*.py"):
        assert "manifest.data[" not in path.read_text(), path


def _open_files(path: Path) -> int:
    """How many of this process's file descriptors point at ``path`` (Linux /proc)."""
    fds = Path("/proc/self/fd")
    count = 0
    for fd in fds.iterdir():
        try:
            count += Path(fd.readlink()) == path
        except OSError:
            continue
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors through /proc")
def test_an_inline_run_leaves_no_connection_to_its_cache_open(tmp_path):
    from pvsst.experiments.run.executors import InlineExecutor
    from pvsst.experiments.run.worker_gateway import worker_gateway

    cache = (tmp_path / "cache.sqlite").resolve()
    settings = GatewaySettings(cache_path=str(cache))
    settings.create_cache()
    executor = InlineExecutor()
    list(executor.map(lambda s: worker_gateway(s).cache.put("k", {"model": "m", "text": "t"}), [settings]))
    assert _open_files(cache) == 1
    executor.close()
    assert _open_files(cache) == 0
    assert worker_gateway(settings).cache.get("k")["text"] == "t"   # the next run opens it again
    InlineExecutor().close()
