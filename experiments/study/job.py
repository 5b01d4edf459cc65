"""A study as the run kernel's job: the manifest of its trials and the :class:`~pvsst.experiments.run.kernel.RunJob`.

:func:`study_job` records the opened study (:mod:`pvsst.experiments.study.input`) and its design in
the manifest and returns the job: its ``prepare`` copies the materials and writes the persona table
(:func:`prepare_inputs`), its payloads are blocks and its worker is
:class:`~pvsst.experiments.study.blocks.BlockWorker`.
"""
from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import pandas as pd
from pydantic import ValidationError

from pvsst.core.errors import InputError
from pvsst.core.run_layout import CACHE, MANIFEST, TRIALS
from pvsst.core.validation import describe_validation_error
from pvsst.experiments.run.kernel import RunJob
from pvsst.experiments.run.manifest import RunManifest
from pvsst.experiments.run.run_guard import gateway_words
from pvsst.experiments.run.summary import RunSummary
from pvsst.experiments.run.worker_gateway import GatewaySettings
from pvsst.experiments.study.blocks import BlockTask, BlockWorker, block_tasks
from pvsst.experiments.study.files import collect_study_files, write_materials
from pvsst.experiments.study.input import StudyInput
from pvsst.experiments.study.personas import resolve_personas
from pvsst.sim.llm.budget import BudgetCap


def study_manifest(run_dir: Path, study: StudyInput) -> RunManifest:
    """The run's manifest with the study, its design and its deviations recorded; a run directory of
    another spec is refused unless a deviation is given, one of a survey always."""
    manifest = RunManifest.load(run_dir)
    if manifest is not None:
        manifest.require_kind("study")
    if manifest is not None and manifest.get("spec_sha256") != study.digest and study.deviation is None:
        raise InputError(run_dir / MANIFEST, "spec_sha256", "this run directory holds a run of a different "
                         "spec; use a new --out, or pass --deviation TEXT to continue it with this spec")
    manifest = manifest or RunManifest.create(run_dir)
    spec, design = study.spec, study.design
    manifest.record(spec_id=spec.id, spec_path=str(study.path), spec_sha256=study.digest, spec=study.canonical,
                    frozen_sha256=study.frozen_sha256, frozen_at=study.frozen_at,
                    blocks={b: list(t) for b, t in design.blocks.items()},
                    protocol=spec.protocol.model_dump(mode="json"))
    manifest.add_deviations(study.deviations)
    stages = spec.run_order.stages or []
    manifest.declare(TRIALS, {plan.trial_id: dict(
        block_id=plan.block_id, model=plan.model_name, topic_id=plan.topic_id, seed=plan.seed,
        condition=plan.condition, push_direction=plan.push_direction, stage=plan.stage,
        stage_name=stages[plan.stage].name if stages else None, order=plan.order) for plan in design.trials})
    return manifest


def study_job(study: StudyInput, run_dir: Path, *, executor: str | None,
              workers: int | None, replay_only: bool, budget_usd: float | None, ray_address: str | None,
              progress: bool, retry_degraded: bool = False) -> RunJob:
    """The kernel's job for the study's trials (options given on the command line win over the spec's)."""
    spec, execution = study.spec, study.execution
    kind, n_workers = executor or execution.executor, workers or execution.workers
    cap_usd = budget_usd if budget_usd is not None else spec.budget.max_usd
    gateway = GatewaySettings(cache_path=str((run_dir / CACHE).resolve()), replay_only=replay_only,
                              config=execution.gateway_config(), max_attempts=spec.trial.max_attempts)
    check_options(workers, budget_usd)
    manifest = study_manifest(run_dir, study)
    prepare = functools.partial(prepare_inputs, study, run_dir, manifest, budget_usd=cap_usd,
                                budget_tokens=spec.budget.max_tokens)
    return RunJob(run_dir=run_dir, manifest=manifest, section=TRIALS, what=f"study {spec.id}", label=spec.id,
                  unit_ids=[p.trial_id for p in study.design.trials], worker=BlockWorker(), prepare=prepare,
                  gateway=gateway, summary=RunSummary(total=len(study.design.trials)),
                  command=["run", study.path, *gateway_words(study.overrides)], deviation=study.deviation,
                  threshold=spec.analysis.parse_failure_threshold, executor=kind, workers=n_workers,
                  ray_address=ray_address or execution.ray_address, progress=progress,
                  session={"executor": kind, "workers": n_workers, "budget_usd": cap_usd},
                  retry_degraded=retry_degraded)


def check_options(workers: int | None, budget_usd: float | None) -> None:
    """Refuse a worker count below 1 or a budget the spec's budget model refuses."""
    if workers is not None and workers < 1:
        raise InputError("--workers", str(workers), "must be >= 1")
    if budget_usd is not None:
        try:
            BudgetCap(max_usd=budget_usd)
        except ValidationError as err:
            raise InputError("--budget", *describe_validation_error(err)) from None


def prepare_inputs(study, run_dir: Path, manifest, job, *, budget_usd: float | None, budget_tokens: int | None):
    """A study job's ``prepare`` (run by the kernel before the first trial): copy the materials into the
    run, write its persona table, read the spec's files once; return the payload builder (blocks of the
    pending trials, :func:`pvsst.experiments.study.blocks.block_tasks`)."""
    spec, spec_dir = study.spec, study.path.parent.resolve()
    manifest.record(materials={"directory": str(study.materials_dir),
                               "sha256": write_materials(run_dir, study.materials_dir)})
    path = resolve_personas(spec, spec_dir, run_dir)
    files, origins = collect_study_files(spec, spec_dir)  # shipped as bytes, not paths
    job.name_originals = lambda error: files.name_the_originals(error, origins)
    template = BlockTask(spec=study.canonical, spec_sha256=study.digest, plans=(), gateway=job.gateway,
                         personas=pd.read_parquet(path) if path is not None else None,  # shipped, not its path
                         files=files, budget_usd=budget_usd, budget_tokens=budget_tokens)
    return lambda pending, summary, each, gateway: block_tasks(study.design, pending, summary, each,
                                                                dataclasses.replace(template, gateway=gateway))
