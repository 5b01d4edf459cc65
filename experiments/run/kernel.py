"""The run kernel: planned units -> skip the finished -> an executor -> the run store, the manifest, one summary.

Study trials (``pvsst run``, ``pvsst simulate``) and survey units (``pvsst survey run``) run through
:func:`run_units`. The composition that calls it (:func:`pvsst.experiments.study.runner.run_study`,
:func:`pvsst.experiments.survey.runner.run_survey`) has opened the frozen input
(:func:`pvsst.experiments.run.frozen.check_frozen`), planned the units and recorded them in the
manifest; it hands over a :class:`RunJob`. The kernel then, inside
:func:`~pvsst.experiments.run.run_guard.guarded_run` (signals and failed writes end in one line):

1. opens this session in the manifest and skips every unit whose folder holds ``DONE``, after checking
   its files against the hashes the marker records (:func:`pvsst.core.integrity.verify_unit`; a
   finished one stays degraded if it was, unless ``retry_degraded``: then it is run again);
2. saves the manifest (a folder holding a run's files always has one) and lets the job write its
   inputs (``prepare``);
3. runs the pending units' payloads on an executor (:mod:`pvsst.experiments.run.executors`): each
   payload goes to the job's :class:`UnitWorker` (``worker.run(payload)``; the executor knows only that
   picklable method and its payloads);
4. writes each finished unit's tables (``RUN/<section>/<unit_id>/``, DONE last): the kernel is the
   run store's only writer; records its status in the manifest and tallies it in the
   :class:`~pvsst.experiments.run.summary.RunSummary`; moves the one progress bar;
5. stops at a run-level stop (budget spent, replay miss), closes the executor and records the summary
   (and any corrupt response-cache row the workers dropped and asked again: ``cache_rows_dropped``).

A worker returns :class:`UnitResult` values: plain data (tables, files, counts), nothing written. Each
job names its worker: :class:`~pvsst.experiments.study.blocks.BlockWorker` (a study's trials),
:class:`~pvsst.experiments.audit.job.AuditUnitWorker` (a study's first-round audit),
:class:`~pvsst.experiments.survey.units.SurveyUnitWorker` (a survey's units) and
:class:`~pvsst.experiments.judge.job.JudgeWorker` (``pvsst judge``).

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from pvsst.experiments.run.manifest import RunManifest
>>> from pvsst.experiments.run.worker_gateway import GatewaySettings
>>> run = Path(tempfile.mkdtemp())
>>> manifest = RunManifest.create(run)
>>> job = RunJob(run_dir=run, manifest=manifest, section="units", what="demo", label="demo",
...              unit_ids=["u1", "u2"], worker=EchoWorker(),
...              prepare=lambda job: lambda pending, summary, each, gateway: pending,
...              gateway=GatewaySettings(cache_path=None), summary=RunSummary(total=2), command=["demo"],
...              threshold=0.05, progress=False)
>>> run_units(job).line()
'2 trials: 2 done, 0 failed, 0 skipped; 2 calls, 0 cache hits, $0.0000'
>>> sorted(p.name for p in (run / "units" / "u1").iterdir()), manifest.units("units")["u2"]["status"]
(['DONE', 'echo.txt'], 'done')
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pandas as pd
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pvsst.core.errors import InputError
from pvsst.core.integrity import verify_unit
from pvsst.core.run_layout import CACHE, is_complete
from pvsst.experiments.run.call_health import degraded_line, model_calls_summary
from pvsst.experiments.run.executors import InlineExecutor, make_executor
from pvsst.experiments.run.manifest import RunManifest, environment, utc_now
from pvsst.experiments.run.run_guard import guarded_run, remove_staging, resume_command
from pvsst.experiments.run.store import write_table_directory
from pvsst.experiments.run.summary import DEGRADED, EXIT_FAILED, RunSummary, unit_status
from pvsst.experiments.run.worker_gateway import GatewaySettings

Payloads = Callable[[list[str], RunSummary, bool, GatewaySettings], Iterable[Any]]
"""(pending unit ids in run order, the summary so far, one unit per payload?, the workers' gateway
settings) -> the payloads to run."""


@dataclass(frozen=True)
class UnitResult:
    """What a worker returns for one unit: plain data, nothing written (the kernel writes ``tables``
    and ``files`` to ``RUN/<section>/<unit_id>/`` when ``status`` is ``done``)."""

    unit_id: str
    status: str                     # done | failed | budget_exceeded | replay_miss (a RunStop's status)
    error: str = ""
    calls: int = 0
    cache_hits: int = 0
    failed_calls: int = 0           # calls that ended without a usable reply
    cost_usd: float = 0.0
    tokens: int = 0
    elapsed_s: float = 0.0
    tables: dict[str, pd.DataFrame] | None = None
    files: dict[str, str] | None = None
    record: dict = field(default_factory=dict)  # more manifest fields of the unit (endpoints, parse failures)
    counts: dict = field(default_factory=dict)  # more tallies for the summary (parse failures)


@runtime_checkable
class UnitWorker(Protocol):
    """A job's worker: what an executor runs on each payload the job plans (a block of trials, an audit
    unit, a survey unit, a run's posts to judge). An instance of a module-level class, so it pickles by
    name into process-pool and Ray workers."""

    def run(self, payload: Any) -> list[UnitResult]:
        """Run one payload in this process; return its units' results (plain data, nothing written)."""
        ...

    def lost(self, payload: Any, error: BaseException) -> list[UnitResult]:
        """The results of a payload whose worker process or node died: its units failed (a rerun runs them)."""
        ...


@runtime_checkable
class StreamingWorker(UnitWorker, Protocol):
    """A worker whose payload holds several units that come back one by one (on Ray, each as it finishes)."""

    def stream(self, payload: Any) -> Iterator[list[UnitResult]]:
        """:meth:`run`, yielding each unit's result as it finishes."""
        ...

    def remaining(self, payload: Any, delivered: list[list[UnitResult]]) -> Any | None:
        """The payload of the units whose result has not come back yet (``None``: none is left)."""
        ...


def lost_units(unit_ids: Iterable[str], error: BaseException) -> list[UnitResult]:
    """Failed results for ``unit_ids``, whose worker was lost (its process or node died).

    Their finished calls are in the run's cache, so a rerun replays them.

    Examples
    --------
    >>> [(r.unit_id, r.status, r.error) for r in lost_units(["u1"], RuntimeError("node died"))]
    [('u1', 'failed', 'worker lost: RuntimeError: node died')]
    """
    line = " ".join(f"{type(error).__name__}: {error}".split())[:300]
    return [UnitResult(unit_id, "failed", f"worker lost: {line}") for unit_id in unit_ids]


@dataclass
class RunJob:
    """Everything the kernel needs to run one composition's units (see the module docstring).

    ``worker`` runs each payload (:class:`UnitWorker`; a :class:`StreamingWorker` streams its units back
    on Ray); ``prepare(job)`` writes the job's inputs into the run directory (inside the guarded section)
    and returns the payload builder (it may set ``name_originals``: how an error names the user's files
    rather than a worker's copies).
    """

    run_dir: Path
    manifest: RunManifest
    section: str
    what: str
    label: str
    unit_ids: list[str]
    worker: UnitWorker
    prepare: Callable[["RunJob"], Payloads]
    gateway: GatewaySettings
    summary: RunSummary
    command: list                   # the command's words that run it again (without --out, --deviation)
    threshold: float
    executor: str = "local"
    workers: int = 1
    ray_address: str | None = None
    deviation: str | None = None    # the --deviation text given (a resumed run is given it again)
    out_option: bool = True         # the run folder is given as --out (pvsst judge names it as its argument)
    session: dict = field(default_factory=dict)
    name_originals: Callable[[str], str] = str
    finish: Callable[[RunSummary], None] | None = None
    progress: bool = True
    manifest_prefix: str = ""       # of the manifest's model_calls / finished_at (a second job of one run)
    retry_degraded: bool = False    # run the degraded units again (``--retry-degraded``)
    retrying: set[str] = field(default_factory=set)


class EchoWorker:
    """A worker of the smallest kind (a payload is a unit id; one call, one text file): the kernel's own example."""

    def run(self, unit_id: str) -> list[UnitResult]:
        return [UnitResult(unit_id, "done", calls=1, files={"echo.txt": unit_id + "\n"})]

    def lost(self, unit_id: str, error: BaseException) -> list[UnitResult]:
        return lost_units([unit_id], error)


def run_units(job: RunJob) -> RunSummary:
    """Run (or resume) the units of ``job`` into its run directory; return the tallied summary."""
    job.manifest.start_run(**job.session, replay_only=job.gateway.replay_only, versions=environment())
    resume = resume_command(job.command, job.run_dir, job.deviation, out=job.out_option)
    with guarded_run(job.manifest, what=job.what, unit=job.summary.unit, total=len(job.unit_ids),
                     resume=resume, cache_path=job.run_dir / CACHE,
                     finished=lambda: sum(is_complete(job.run_dir / job.section / u) for u in job.unit_ids)):
        job.run_dir.mkdir(parents=True, exist_ok=True)
        pending = _skip_finished(job)
        job.manifest.save()
        try:
            payloads = job.prepare(job)
        except InputError:  # refused before any unit ran (changed inputs, bad materials): no session on record
            job.manifest.discard_run()
            job.manifest.save()
            raise
        remove_staging(job.run_dir / job.section)  # a unit a killed run was writing
        job.manifest.save()
        job.gateway.create_cache()
        _execute(job, payloads, pending)
        dropped = job.gateway.dropped_rows()
        if dropped:  # corrupt cache rows, asked again: on record, not fatal
            job.manifest.record(cache_rows_dropped=dropped)
    if job.finish is not None:
        job.finish(job.summary)
    if job.summary.degraded and not job.summary.exit_code:
        job.summary.exit_code = EXIT_FAILED
    finished = all(is_complete(job.run_dir / job.section / u) for u in job.unit_ids)
    job.manifest.record(**{f"{job.manifest_prefix}model_calls": model_calls_summary(job.manifest.units(job.section)),
                           f"{job.manifest_prefix}finished_at": utc_now() if finished else None})
    job.manifest.update_run(finished_at=utc_now(), summary=job.summary.line())
    job.manifest.save()
    return job.summary


def _skip_finished(job: RunJob) -> list[str]:
    """The unit ids without DONE (and, with ``retry_degraded``, the degraded ones), in run order; the
    finished ones are verified (a changed file is an ``InputError`` naming it) and counted as skipped."""
    pending = []
    for unit_id in job.unit_ids:
        unit_dir = job.run_dir / job.section / unit_id
        if not is_complete(unit_dir):
            pending.append(unit_id)
            continue
        verify_unit(unit_dir)
        entry = job.manifest.units(job.section).get(unit_id, {})
        if entry.get("status") == DEGRADED and job.retry_degraded:
            pending.append(unit_id)  # its folder is kept until the new attempt's tables replace it
            job.retrying.add(unit_id)
            continue
        job.summary.skipped += 1
        if entry.get("status") == DEGRADED:  # still degraded: resuming does not make it a success
            job.summary.degraded.append(degraded_line(unit_id, entry, job.threshold))
        else:
            job.manifest.set_unit(job.section, unit_id, status="done")
    return pending


def _execute(job: RunJob, payloads: Payloads, pending: list[str]) -> None:
    runner = make_executor(job.executor, job.workers, job.ray_address)
    try:
        gateway = runner.share_cache(job.gateway)
        # In-process, a payload per unit moves the progress bar per unit; same order, same cache.
        work = payloads(pending, job.summary, isinstance(runner, InlineExecutor), gateway)
        worker = job.worker
        if isinstance(worker, StreamingWorker) and hasattr(runner, "map_streaming"):  # Ray: each unit as it ends
            results = runner.map_streaming(worker.stream, work, resume=worker.remaining, on_error=worker.lost)
        else:
            results = runner.map(worker.run, work, on_error=worker.lost)
        bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), TextColumn("{task.fields[last]}"), disable=not job.progress)
        with bar:
            task = bar.add_task(job.label, total=len(job.unit_ids), completed=job.summary.skipped, last="")
            for batch in results:
                for result in batch:
                    _store(job, result)
                    bar.update(task, advance=1, last=f"{result.unit_id}: {result.status}")
                    job.summary.stop(result.status, result.error)
                job.manifest.record(**{f"{job.manifest_prefix}model_calls":
                                       model_calls_summary(job.manifest.units(job.section))})
                job.manifest.save()
                if job.summary.stopped:
                    break
    except BaseException:  # Ctrl-C, SIGTERM, a failed write: stop the workers, do not wait for them
        runner.close(abort=True)
        raise
    runner.close()


def _store(job: RunJob, result: UnitResult) -> None:
    """Write a finished unit (the run store's one writer), record its status, tally it."""
    if result.status == "done" and (result.tables or result.files):
        write_table_directory(job.run_dir / job.section, result.unit_id, result.tables or {}, result.files)
    error = job.name_originals(result.error) if result.error else ""
    status = unit_status(result.status, result.calls, result.failed_calls, job.threshold)
    if result.unit_id in job.retrying and status not in ("done", DEGRADED):
        # the retry failed: the degraded tables are still the unit's, and so is its status
        job.manifest.set_unit(job.section, result.unit_id, retry_error=error or status)
        job.summary.degraded.append(degraded_line(result.unit_id, job.manifest.units(job.section)[result.unit_id],
                                                  job.threshold))
        return
    share = result.failed_calls / result.calls if result.calls else 0.0
    job.manifest.set_unit(job.section, result.unit_id, status=status, error=error, calls=result.calls,
                          cache_hits=result.cache_hits, failed_calls=result.failed_calls,
                          failed_share=round(share, 6), elapsed_s=round(result.elapsed_s, 3),
                          finished_at=utc_now(), **result.record)
    if status == DEGRADED:
        error = degraded_line("", job.manifest.units(job.section)[result.unit_id], job.threshold)[2:]
    job.summary.count(result.unit_id, status, error, result.calls, result.cache_hits, cost_usd=result.cost_usd,
                      tokens=result.tokens, **result.counts)
