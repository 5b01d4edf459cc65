"""The thread study runner: frozen ``schedule: threads`` spec -> one unit per thread -> the run store.

:func:`run_thread_study` opens the spec once (lock, templates and persona file checked with
:func:`~pvsst.experiments.run.frozen.check_frozen`; an unfrozen or changed spec needs a deviation),
records it in the manifest, writes the run's persona table once (``RUN/personas.parquet``: a resumed
run reads the same rows) and hands the threads to the run kernel (:mod:`pvsst.experiments.run.kernel`)::

    RUN/manifest.json            the spec, its hash, every thread's status and call accounting
    RUN/personas.parquet         the personas the threads draw their authors and engaged personas from
    RUN/cache.sqlite             the response cache (a resumed run replays finished calls)
    RUN/threads/<thread_id>/     comments, actions, agents, comment_votes, llm_calls, prompts, DONE

A killed run resumes where it stopped: finished threads (``DONE``) are skipped and an unfinished one
is run again from its start, its finished calls replayed from the cache, so its tables are byte for
byte those of an uninterrupted run.

Examples
--------
>>> spec = "experiments/specs/threads_scripted.yaml"
>>> summary = run_thread_study(spec, "/tmp/threads-run", progress=False)  # doctest: +SKIP
>>> summary.line()  # doctest: +SKIP
'5 threads: 5 done, 0 failed, 0 skipped; ...'
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pandas as pd

from pvsst.core.errors import InputError
from pvsst.core.input_files import regular_file
from pvsst.core.run_folder import claimed_run_folder
from pvsst.core.run_layout import CACHE, MANIFEST, PERSONAS, THREADS
from pvsst.experiments.run.frozen import check_frozen, override_record
from pvsst.experiments.run.kernel import RunJob, run_units
from pvsst.experiments.run.manifest import RunManifest
from pvsst.experiments.run.run_guard import gateway_words
from pvsst.experiments.run.summary import RunSummary
from pvsst.experiments.run.worker_gateway import GatewaySettings
from pvsst.experiments.spec.execution import Execution
from pvsst.experiments.spec.thread_study import (
    ThreadStudySpec,
    canonical_thread_spec,
    load_thread_spec,
    thread_files_hashes,
    thread_input_files,
    thread_materials_dir,
)
from pvsst.experiments.study.files import StudyFiles
from pvsst.experiments.study.job import check_options
from pvsst.experiments.threads.personas import thread_personas
from pvsst.experiments.threads.worker import ThreadTask, ThreadWorker, study_plans
from pvsst.personas.records import read_personas, write_personas
from pvsst.sim.materials import default_materials_dir
from pvsst.sim.materials.catalog import THREAD_FILES
from pvsst.sim.threads.plan import thread_id_of


@dataclass
class ThreadRunSummary(RunSummary):
    """The run kernel's summary, counted in threads."""

    unit: ClassVar[str] = "threads"


@dataclass(frozen=True)
class ThreadStudyInput:
    """A thread spec opened for a run: the spec, its canonical form and hash, its lock and deviations,
    and the effective ``execution`` (command-line overrides applied)."""

    path: Path
    deviation: str | None
    overrides: dict
    spec: ThreadStudySpec
    canonical: dict
    digest: str
    frozen_sha256: str | None
    frozen_at: str | None
    deviations: list[dict]
    execution: Execution

    @property
    def thread_ids(self) -> list[str]:
        return [thread_id_of(i) for i in range(self.spec.threads.n_threads)]


def open_thread_study(spec_path: str | Path, deviation: str | None, overrides: dict | None = None) -> ThreadStudyInput:
    """Read and check a frozen thread spec (its templates and persona file against the lock); apply the
    gateway ``overrides``."""
    spec_path = Path(spec_path)
    spec = load_thread_spec(spec_path)
    canonical = canonical_thread_spec(spec)
    spec_dir = spec_path.parent
    directory = thread_materials_dir(spec, spec_dir) or default_materials_dir().resolve()
    execution = spec.execution.with_options("command line", **(overrides or {}))
    digest, record, lock = check_frozen(canonical, spec_path, deviation, directory, thread_files_hashes(spec, spec_dir),
                                        thread_input_files(spec, spec_dir))
    override = override_record(overrides or {}, spec.execution.model_dump(mode="json"),
                               execution.model_dump(mode="json"), digest, digest, "execution")
    return ThreadStudyInput(spec_path, deviation, {k: v for k, v in (overrides or {}).items() if v is not None},
                            spec, canonical, digest, lock.spec_sha256 if lock else None,
                            lock.frozen_at if lock else None, [r for r in (record, override) if r is not None],
                            execution)


def thread_manifest(run_dir: Path, study: ThreadStudyInput, personas: pd.DataFrame) -> RunManifest:
    """The run's manifest with the thread study recorded (each thread's topic and author, planned from
    ``personas``); a run of another spec is refused unless a deviation is given, a run of another kind always."""
    manifest = RunManifest.load(run_dir)
    if manifest is not None:
        manifest.require_kind("threads")
        if manifest.get("spec_sha256") != study.digest and study.deviation is None:
            raise InputError(run_dir / MANIFEST, "spec_sha256", "this run directory holds a run of a different "
                             "spec; use a new --out, or pass --deviation TEXT to continue it with this spec")
    manifest = manifest or RunManifest.create(run_dir, schedule="threads")
    spec = study.spec
    manifest.record(schedule="threads", spec_id=spec.id, spec_path=str(study.path), spec_sha256=study.digest,
                    spec=study.canonical, frozen_sha256=study.frozen_sha256, frozen_at=study.frozen_at)
    manifest.add_deviations(study.deviations)
    manifest.declare(THREADS, {plan.thread_id: {"model": spec.model, "topic_id": plan.topic.id,
                                                "author": str(plan.author["persona_id"])}
                               for plan in study_plans(spec, personas)})
    return manifest


def thread_files(spec: ThreadStudySpec, spec_dir: Path) -> StudyFiles:
    """The bytes of the spec's own thread templates (none when it uses pvsst's)."""
    directory = thread_materials_dir(spec, spec_dir)
    if directory is None or not any((directory / name).is_file() for name in THREAD_FILES):
        return StudyFiles()
    return StudyFiles(materials=tuple((name, regular_file(directory / name, "materials").read_bytes())
                                      for name in sorted(THREAD_FILES)))


def prepare_threads(study: ThreadStudyInput, run_dir: Path, job: RunJob, *, personas: pd.DataFrame | None,
                    budget_usd: float | None):
    """The job's ``prepare``: write the persona table once, read the templates once; return the payload
    builder (one task per pending thread, or all pending threads in one task on a single worker)."""
    target = run_dir / PERSONAS
    if not target.is_file():
        write_personas(personas, target)
    table = read_personas(target)
    template = ThreadTask(spec=study.canonical, thread_ids=(), gateway=job.gateway, personas=table,
                          files=thread_files(study.spec, study.path.parent), budget_usd=budget_usd,
                          budget_tokens=study.spec.budget.max_tokens)

    def payloads(pending, summary, each, gateway):
        for thread_id in pending:
            yield ThreadTask(**{**template.__dict__, "thread_ids": (thread_id,), "gateway": gateway,
                                "spent_usd": summary.cost_usd, "spent_tokens": summary.tokens})

    return payloads


def thread_job(study: ThreadStudyInput, run_dir: Path, *, executor: str | None, workers: int | None,
               replay_only: bool, budget_usd: float | None, ray_address: str | None, progress: bool,
               personas: pd.DataFrame | None = None, retry_degraded: bool = False) -> RunJob:
    """The kernel's job for the study's threads (options given on the command line win over the spec's);
    ``personas`` is the persona table to write when the run has none yet."""
    spec, execution = study.spec, study.execution
    kind, n_workers = executor or execution.executor, workers or execution.workers
    cap_usd = budget_usd if budget_usd is not None else spec.budget.max_usd
    if personas is None and not (run_dir / PERSONAS).is_file():
        personas = thread_personas(spec, study.path.parent)
    gateway = GatewaySettings(cache_path=str((run_dir / CACHE).resolve()), replay_only=replay_only,
                              config=execution.gateway_config(), max_attempts=spec.max_attempts)
    manifest = thread_manifest(run_dir, study, personas if personas is not None else read_personas(run_dir / PERSONAS))
    prepare = functools.partial(prepare_threads, study, run_dir, personas=personas, budget_usd=cap_usd)
    return RunJob(run_dir=run_dir, manifest=manifest, section=THREADS, what=f"thread study {spec.id}",
                  label=spec.id, unit_ids=study.thread_ids, worker=ThreadWorker(), prepare=prepare, gateway=gateway,
                  summary=ThreadRunSummary(total=len(study.thread_ids)),
                  command=["run", study.path, *gateway_words(study.overrides)], deviation=study.deviation,
                  threshold=spec.parse_failure_threshold, executor=kind, workers=n_workers,
                  ray_address=ray_address or execution.ray_address, progress=progress,
                  session={"executor": kind, "workers": n_workers, "budget_usd": cap_usd},
                  retry_degraded=retry_degraded)


def run_thread_study(spec_path: str | Path, run_dir: str | Path, *, executor: str | None = None,
                     workers: int | None = None, replay_only: bool = False, deviation: str | None = None,
                     budget_usd: float | None = None, ray_address: str | None = None, progress: bool = True,
                     gateway: dict | None = None, retry_degraded: bool = False) -> ThreadRunSummary:
    """Run (or resume) every thread of a frozen thread spec into ``run_dir``; see the module docstring.

    Parameters
    ----------
    spec_path : the thread spec, frozen with ``pvsst prereg freeze`` (or given a ``deviation``).
    run_dir : new, empty, or a run of this spec (resumed).
    executor, workers, ray_address : how the threads run (default: the spec's ``execution``).
    replay_only : serve every call from the run's cache; a miss stops the run.
    deviation : run a changed or unfrozen spec; the text is recorded in the manifest.
    budget_usd : a spending cap for this run (default: the spec's ``budget.max_usd``).
    progress : show the progress bar.
    gateway : gateway settings overriding the spec's ``execution`` section (recorded as a deviation).
    retry_degraded : run again the threads an earlier session left degraded.

    Returns
    -------
    ThreadRunSummary
        The tally of the run; its ``exit_code`` is the command's.

    Examples
    --------
    >>> import tempfile
    >>> try:
    ...     run_thread_study("experiments/specs/threads_scripted.yaml", tempfile.mkdtemp(), deviation=None,
    ...                      budget_usd=-1.0)
    ... except InputError as err:
    ...     print(err.source, err.field)
    --budget max_usd
    """
    study = open_thread_study(spec_path, deviation, gateway)
    check_options(workers, budget_usd)
    # too small a persona table is refused before the run folder is touched
    personas = None if (Path(run_dir) / PERSONAS).is_file() else thread_personas(study.spec, study.path.parent)
    with claimed_run_folder(run_dir):
        return run_units(thread_job(study, Path(run_dir), executor=executor, workers=workers, replay_only=replay_only,
                                    budget_usd=budget_usd, ray_address=ray_address, progress=progress,
                                    personas=personas, retry_degraded=retry_degraded))
