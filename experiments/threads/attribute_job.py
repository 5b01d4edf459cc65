"""``pvsst judge attributes RUN --model M``: a model guesses each author's attributes from their comments.

The attribute judge (:class:`pvsst.sim.judges.attribute_judge.AttributeJudge`, SynthPAI's task: top
three guesses per attribute with a certainty) reads, for every author of a thread run, everything that
author wrote in every thread, and guesses the attributes its persona has. It runs as a run-kernel job
of one unit per judge model, ``RUN/attributes/<model slug>/`` (``guesses.parquet``, ``llm_calls.parquet``,
``DONE`` last), its calls through a gateway configured as the run's spec configures its own and answered
from the run's response cache, so judging a finished run again makes no call. ``pvsst analyze`` scores
the guesses (:mod:`pvsst.analysis.threads.attribute_inference`, ``analysis/attribute_inference.csv``).

Examples
--------
>>> result = judge_attributes("/tmp/threads-run", "scripted/attribute_reader", progress=False)  # doctest: +SKIP
>>> result.summary.line()  # doctest: +SKIP
'1 judges: 1 done, 0 failed, 0 skipped; 139 calls, 0 cache hits, $0.0000'
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pandas as pd

from pvsst.analysis.threads.attribute_inference import attribute_inference_table
from pvsst.analysis.threads.run_tables import GUESSES, is_thread_run, read_attribute_guesses, read_thread_run
from pvsst.core.errors import InputError
from pvsst.core.run_folder import claimed_run_folder
from pvsst.core.run_layout import ATTRIBUTES, CACHE, MANIFEST
from pvsst.experiments.run.kernel import RunJob, UnitResult, lost_units, run_units
from pvsst.experiments.run.manifest import RunManifest
from pvsst.experiments.run.run_guard import gateway_words
from pvsst.experiments.run.summary import RunSummary
from pvsst.experiments.run.worker_gateway import GatewaySettings, worker_gateway
from pvsst.experiments.spec.execution import Execution
from pvsst.experiments.spec.study import model_slug
from pvsst.experiments.study.trial_pipeline import call_totals
from pvsst.sim.judges.attribute_judge import AttributeJudge, attribute_guesses
from pvsst.sim.llm.providers.registry import ensure_runnable
from pvsst.sim.llm.types import CALL_RECORD_FIELDS


@dataclass
class AttributeSummary(RunSummary):
    """The attribute job's summary: it counts judge models."""

    unit: ClassVar[str] = "judges"


@dataclass(frozen=True)
class AttributeTask:
    """One judge model's work (plain data): every comment and participant of the run."""

    model: str
    comments: pd.DataFrame
    agents: pd.DataFrame
    gateway: GatewaySettings
    seed: int = 0
    max_comments: int | None = None


class AttributeWorker:
    """The attribute job's worker: one judge model guesses every author's attributes."""

    def run(self, task: AttributeTask) -> list[UnitResult]:
        started = time.perf_counter()
        gateway = worker_gateway(task.gateway)
        gateway.drain_records()
        guesses = attribute_guesses(AttributeJudge(task.model, gateway, seed=task.seed), task.comments, task.agents,
                                    max_comments=task.max_comments)
        calls = pd.DataFrame([r.to_dict() for r in gateway.drain_records()], columns=list(CALL_RECORD_FIELDS))
        totals = call_totals(calls)
        failed = int((calls["status"] != "ok").sum()) if len(calls) else 0
        return [UnitResult(model_slug(task.model), "done", calls=totals["n_calls"], cache_hits=totals["cache_hits"],
                           failed_calls=failed, cost_usd=totals["cost_usd"],
                           tokens=totals["prompt_tokens"] + totals["completion_tokens"],
                           elapsed_s=time.perf_counter() - started, tables={GUESSES: guesses, "llm_calls": calls})]

    def lost(self, task: AttributeTask, error: BaseException) -> list[UnitResult]:
        return lost_units([model_slug(task.model)], error)


@dataclass
class AttributeResult:
    """What ``pvsst judge attributes`` prints: the kernel's summary and the scored table of every judge."""

    summary: AttributeSummary
    table: pd.DataFrame


def judge_attributes(run_dir: str | Path, model: str, *, seed: int = 0, max_comments: int | None = None,
                     gateway: dict | None = None, progress: bool = True) -> AttributeResult:
    """Guess the attributes of every author of the thread run ``run_dir`` with ``model`` (see the module
    docstring); a folder that is not a finished thread run is an ``InputError``.

    Parameters
    ----------
    run_dir : a thread run's folder.
    model : the judge's model string.
    seed : the request seed of every call.
    max_comments : read at most this many comments of each author (``None``: all).
    gateway : gateway settings overriding the run spec's ``execution`` section.
    progress : show the progress bar.

    Returns
    -------
    AttributeResult
        The kernel's summary and the scored table (:func:`~pvsst.analysis.threads.attribute_inference.
        attribute_inference_table`) of every judge that read the run.

    Examples
    --------
    >>> import tempfile
    >>> try:
    ...     judge_attributes(tempfile.mkdtemp(), "scripted/attribute_reader")
    ... except InputError as err:
    ...     print(err.field)
    manifest.json
    """
    run_dir = Path(run_dir)
    if not is_thread_run(run_dir):
        raise InputError(str(run_dir), MANIFEST, "not a thread run (pvsst judge attributes reads the folder of "
                         "`pvsst run` on a `schedule: threads` spec)")
    ensure_runnable(model)
    tables = read_thread_run(run_dir, ("comments", "agents"))
    if tables["comments"].empty:
        raise InputError(str(run_dir), "threads", "no finished thread to judge")
    manifest = RunManifest.load(run_dir)
    execution = Execution.model_validate((manifest.get("spec") or {}).get("execution") or {})
    config = execution.with_options("command line", **(gateway or {})).gateway_config()
    slug = model_slug(model)
    section = ATTRIBUTES
    manifest.declare(section, {slug: {"model": model}})
    settings = GatewaySettings(cache_path=str((run_dir / CACHE).resolve()), config=config)
    task = AttributeTask(model, tables["comments"], tables["agents"], settings, seed, max_comments)
    job = RunJob(run_dir=run_dir, manifest=manifest, section=section, what=f"attribute judge {model}",
                 label=f"attributes {model}", unit_ids=[slug], worker=AttributeWorker(),
                 prepare=lambda job: lambda pending, summary, each, workers_gateway: [
                     AttributeTask(**{**task.__dict__, "gateway": workers_gateway})] if pending else [],
                 gateway=settings, summary=AttributeSummary(total=1),
                 command=["judge", "attributes", run_dir, "--model", model, *gateway_words(gateway or {})],
                 threshold=1.0, out_option=False, session={"job": section, "gateway": gateway or {}},
                 progress=progress, manifest_prefix=f"{ATTRIBUTES}_{slug}_")
    with claimed_run_folder(run_dir):
        summary = run_units(job)
    guesses = read_attribute_guesses(run_dir)
    agents = tables["agents"].drop_duplicates("persona_id")
    table = attribute_inference_table(guesses, agents) if not guesses.empty else pd.DataFrame()
    return AttributeResult(summary, table)
