"""The study runner: frozen spec -> design -> trials (resumable) -> run store.

``run_study`` refuses a spec that is not frozen or has changed since it was frozen unless a deviation
is given (recorded in the manifest with both hashes). It skips trials whose directory has DONE, so a
killed run resumes where it stopped; one response cache per run directory means a resumed trial replays
its finished calls instead of repeating them.

Examples
--------
>>> summary = run_study("experiments/specs/scripted_smoke.yaml", "/tmp/pvsst-doctest-run", progress=False)  # doctest: +SKIP
>>> summary.line()  # doctest: +SKIP
'32 trials: 32 done, 0 failed, 0 skipped; 10176 calls, 0 cache hits, $0.0000'
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import pandas as pd
from pydantic import ValidationError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pvsst.experiments.spec.design import Design, expand
from pvsst.core.errors import InputError
from pvsst.experiments.run.call_health import DEGRADED, degraded_line, model_calls_summary, trial_fields, trial_status
from pvsst.core.validation import describe_validation_error
from pvsst.sim.llm.budget import BudgetCap, BudgetExceeded
from pvsst.sim.llm.cache import ReplayMiss
from pvsst.experiments.run.executors import (BlockTask, GatewaySettings, InlineExecutor, lost_block, make_executor,
                                      remaining_block, run_block, run_block_trials)
from pvsst.experiments.run.manifest import RunManifest, environment, utc_now
from pvsst.experiments.run.run_guard import guarded_run, remove_staging, resume_command
from pvsst.experiments.run.persona_source import resolve_personas
from pvsst.experiments.spec.prereg import Lock, compare, read_lock
from pvsst.experiments.spec.study import StudySpec, canonical_sha256, canonical_spec, load_spec
from pvsst.experiments.run.trial_pipeline import TrialOutcome, store_outcome
from pvsst.experiments.run.store import is_complete, write_materials
from pvsst.experiments.run.study_files import collect_study_files
from pvsst.experiments.spec.materials import spec_materials_dir
from pvsst.sim.materials import materials_hashes

CACHE_FILE = "cache.sqlite"
STOP_EXIT_CODES = {stop.status: stop.exit_code for stop in (BudgetExceeded, ReplayMiss)}
"""Trial status left by a run-level stop -> the exit code of the run (3 budget spent, 4 replay-only miss)."""
EXIT_DEGRADED = 1  # as for failed trials: the run did not produce what it was meant to


@dataclass
class RunSummary:
    """What a run did, as the runner tallies it trial by trial (or unit by unit for a survey)."""

    unit: ClassVar[str] = "trials"
    total: int
    done: int = 0
    failed: int = 0
    skipped: int = 0
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0
    tokens: int = 0
    stopped: str = ""
    exit_code: int = 0
    failures: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)  # "trial: share of calls failed" lines

    def count(self, name: str, status: str, error: str, calls: int, cache_hits: int) -> None:
        """Add one finished trial (or survey unit) to the tallies."""
        if status == "done":
            self.done += 1
        elif status == DEGRADED:
            self.degraded.append(f"{name}: {error}")
        elif status == "failed":
            self.failed += 1
            self.failures.append(f"{name}: {error}")
        self.calls += calls
        self.cache_hits += cache_hits

    def spend(self) -> str:
        """The last part of :meth:`line` (a survey run reports its parse failures there instead)."""
        return f"${self.cost_usd:.4f}"

    def line(self) -> str:
        """One line: tallies, calls, spend and why the run stopped (the one summary every run command prints)."""
        degraded = f"{len(self.degraded)} degraded, " if self.degraded else ""
        text = (f"{self.total} {self.unit}: {self.done} done, {degraded}{self.failed} failed, {self.skipped} skipped; "
                f"{self.calls} calls, {self.cache_hits} cache hits, {self.spend()}")
        return f"{text}; stopped: {self.stopped}" if self.stopped else text

    @property
    def status(self) -> int:
        """The command's exit code: the stop's (3 budget, 4 replay miss), else 1 if a trial failed or is
        degraded, else 0."""
        return self.exit_code or (1 if self.failed or self.degraded else 0)


def check_frozen(canonical: dict, lock: Lock | None, spec_path: Path, deviation: str | None,
                 materials_dir: Path | None = None, materials: dict[str, str] | None = None) -> tuple[str, dict | None]:
    """Return (current sha256, deviation record or None) for a loaded spec (in canonical form), the sha256
    of its materials files and its loaded lock; refuse an unfrozen or changed spec. Reads no spec or lock
    file (``spec_path`` names it in errors)."""
    if lock is None:
        if deviation is None:
            raise InputError(spec_path, "lock", f"spec is not frozen: run `pvsst prereg freeze {spec_path}` "
                             "first, or pass --deviation TEXT")
        current = canonical_sha256(canonical)
        return current, {"text": deviation, "frozen_sha256": None, "current_sha256": current, "at": utc_now()}
    check = compare(canonical, lock, spec_name=spec_path.name, materials_dir=materials_dir, materials=materials)
    if check.ok:
        return check.current_sha256, ({"text": deviation, "frozen_sha256": check.frozen_sha256,
                                       "current_sha256": check.current_sha256, "at": utc_now()}
                                      if deviation else None)
    if deviation is None and check.frozen_sha256 == check.current_sha256:
        raise InputError(check.changed_materials[0], "sha256", "materials file changed since the spec was frozen "
                         f"({len(check.changed_materials)} file(s) differ); re-freeze or pass --deviation TEXT")
    if deviation is None:
        raise InputError(spec_path, "spec_sha256", f"hash mismatch: spec changed since it was frozen (frozen "
                         f"{check.frozen_sha256[:12]}, now {check.current_sha256[:12]}; changed: "
                         f"{'; '.join(check.changed_fields[:3])}); re-freeze or pass --deviation TEXT")
    return check.current_sha256, {"text": deviation, "frozen_sha256": check.frozen_sha256,
                                  "current_sha256": check.current_sha256, "changed_fields": check.changed_fields,
                                  "changed_materials": check.changed_materials,
                                  "at": utc_now()}


def _open_manifest(run_dir: Path, spec_path: Path, spec: StudySpec, canonical: dict, lock: Lock | None,
                   digest: str, design: Design, deviation: dict | None) -> RunManifest:
    manifest = RunManifest.load(run_dir)
    if manifest is not None and manifest.data.get("spec_sha256") != digest and deviation is None:
        raise InputError(run_dir / "manifest.json", "spec_sha256", "this run directory holds a run of a different "
                         "spec; use a new --out, or pass --deviation TEXT to continue it with this spec")
    if manifest is None:
        manifest = RunManifest.create(run_dir)
    manifest.data.update({
        "spec_id": spec.id, "spec_path": str(spec_path), "spec_sha256": digest, "spec": canonical,
        "frozen_sha256": lock.spec_sha256 if lock else None, "frozen_at": lock.frozen_at if lock else None,
        "blocks": {b: list(t) for b, t in design.blocks.items()},
        "protocol": spec.protocol.model_dump(mode="json"),
    })
    if deviation is not None:
        manifest.data["deviations"].append(deviation)
    stages = spec.run_order.stages or []
    for plan in design.trials:
        manifest.trials.setdefault(plan.trial_id, {"status": "pending"}).update(
            block_id=plan.block_id, model=plan.model_name, topic_id=plan.topic_id, seed=plan.seed,
            condition=plan.condition, push_direction=plan.push_direction, stage=plan.stage,
            stage_name=stages[plan.stage].name if stages else None, order=plan.order)
    return manifest


def run_study(spec_path: str | Path, run_dir: str | Path, *, executor: str | None = None,
              workers: int | None = None, replay_only: bool = False, deviation: str | None = None,
              budget_usd: float | None = None, ray_address: str | None = None, progress: bool = True) -> RunSummary:
    """Run (or resume) every trial of a frozen spec into ``run_dir``; see the module docstring."""
    spec_path, run_dir = Path(spec_path), Path(run_dir)
    spec, lock = load_spec(spec_path), read_lock(spec_path)  # each file is read once, here
    canonical = canonical_spec(spec)
    materials_dir = spec_materials_dir(spec, spec_path.parent)
    digest, deviation_record = check_frozen(canonical, lock, spec_path, deviation, materials_dir,
                                            materials_hashes(materials_dir))
    if workers is not None and workers < 1:
        raise InputError("--workers", str(workers), "must be >= 1")
    if budget_usd is not None:
        try:
            BudgetCap(max_usd=budget_usd)
        except ValidationError as err:
            raise InputError("--budget", *describe_validation_error(err)) from None
    design = expand(spec)
    manifest = _open_manifest(run_dir, spec_path, spec, canonical, lock, digest, design, deviation_record)
    execution = spec.execution
    kind = executor or execution.executor
    n_workers = workers or execution.workers
    cap_usd = budget_usd if budget_usd is not None else spec.budget.max_usd
    cap_tokens = spec.budget.max_tokens
    manifest.data["runs"].append({"started_at": utc_now(), "executor": kind, "workers": n_workers,
                                  "replay_only": replay_only, "budget_usd": cap_usd, "versions": environment()})
    resume = resume_command(["run", spec_path], run_dir, deviation)
    with guarded_run(manifest, what=f"study {spec.id}", unit="trials", total=len(design.trials), resume=resume,
                     finished=lambda: sum(is_complete(run_dir / "trials" / p.trial_id) for p in design.trials),
                     cache_path=run_dir / CACHE_FILE):
        return _run_trials(spec_path, run_dir, spec, canonical, digest, design, manifest, materials_dir,
                           kind=kind, n_workers=n_workers, replay_only=replay_only, cap_usd=cap_usd,
                           cap_tokens=cap_tokens, ray_address=ray_address, progress=progress)


def _run_trials(spec_path: Path, run_dir: Path, spec: StudySpec, canonical: dict, digest: str, design: Design,
                manifest: RunManifest, materials_dir: Path, *, kind: str, n_workers: int, replay_only: bool,
                cap_usd: float | None, cap_tokens: int | None, ray_address: str | None,
                progress: bool) -> RunSummary:
    execution = spec.execution
    manifest.data["materials"] = {"directory": str(materials_dir),
                                  "sha256": write_materials(run_dir, materials_dir)}
    run_dir.mkdir(parents=True, exist_ok=True)
    remove_staging(run_dir / "trials")  # a trial a killed run was writing
    personas_path = resolve_personas(spec, spec_path.parent.resolve(), run_dir)
    personas = pd.read_parquet(personas_path) if personas_path is not None else None  # shipped, not its path
    files, file_origins = collect_study_files(spec, spec_path.parent.resolve())  # shipped as bytes, not paths
    settings = GatewaySettings(
        cache_path=str((run_dir / CACHE_FILE).resolve()), replay_only=replay_only,
        config=execution.gateway_config(), max_attempts=spec.trial.max_attempts)
    threshold = spec.analysis.parse_failure_threshold
    manifest.save()

    summary = RunSummary(total=len(design.trials))
    pending = []
    for plan in design.trials:
        if is_complete(run_dir / "trials" / plan.trial_id):
            summary.skipped += 1
            entry = manifest.trials.get(plan.trial_id, {})
            if entry.get("status") == DEGRADED:  # still degraded: resuming does not make it a success
                summary.degraded.append(degraded_line(plan.trial_id, entry, threshold))
            else:
                manifest.set_trial(plan.trial_id, status="done")
        else:
            pending.append(plan)
    spent = {"usd": 0.0, "tokens": 0}

    def tasks(one_trial_each: bool, settings: GatewaySettings):
        blocks: dict[str, list] = {}
        for plan in pending:  # blocks in run order; a block's pending trials in run order
            blocks.setdefault(plan.block_id, []).append(plan)
        groups = [[p] for plans in blocks.values() for p in plans] if one_trial_each else blocks.values()
        for plans in groups:
            yield BlockTask(
                spec=canonical, spec_sha256=digest, plans=tuple(plans), gateway=settings, personas=personas,
                files=files,
                budget_usd=cap_usd, budget_tokens=cap_tokens, spent_usd=spent["usd"], spent_tokens=spent["tokens"])

    settings.create_cache()
    runner = make_executor(kind, n_workers, ray_address or execution.ray_address)
    try:
        worker_settings = runner.share_cache(settings)
    except BaseException:
        runner.close(abort=True)
        raise
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("{task.fields[last]}"), disable=not progress, transient=False)
    try:
        with bar:
            task_id = bar.add_task(f"{spec.id}", total=len(design.trials), completed=summary.skipped, last="")
            # In-process, a task per trial moves the progress bar per trial; same order, same cache.
            work = tasks(isinstance(runner, InlineExecutor), worker_settings)
            if hasattr(runner, "map_streaming"):  # Ray: each trial comes back as it finishes
                results = runner.map_streaming(run_block_trials, work, resume=remaining_block, on_error=lost_block)
            else:
                results = runner.map(run_block, work, on_error=lost_block)
            for outcomes in results:
                for outcome in outcomes:
                    outcome = store_outcome(outcome, run_dir)  # the driver is the run store's only writer
                    if outcome.error:  # a worker's message names its staged copies: name the user's files
                        outcome = replace(outcome, error=files.name_the_originals(outcome.error, file_origins))
                    status = trial_status(outcome, threshold)
                    manifest.set_trial(outcome.trial_id, status=status, error=outcome.error,
                                       calls=outcome.calls, cache_hits=outcome.cache_hits,
                                       elapsed_s=round(outcome.elapsed_s, 3), finished_at=utc_now(),
                                       **trial_fields(outcome))
                    error = (degraded_line("", manifest.trials[outcome.trial_id], threshold)[2:]
                             if status == DEGRADED else outcome.error)
                    _account(summary, outcome, spent, status, error)
                    bar.update(task_id, advance=1, last=f"{outcome.trial_id}: {outcome.status}")
                    if outcome.status in STOP_EXIT_CODES:
                        summary.stopped = outcome.error
                        summary.exit_code = STOP_EXIT_CODES[outcome.status]
                manifest.data["model_calls"] = model_calls_summary(manifest.trials)
                manifest.save()
                if summary.stopped:
                    break
    except BaseException:  # Ctrl-C, SIGTERM, a failed write: stop the workers, do not wait for them
        runner.close(abort=True)
        raise
    runner.close()
    manifest.data["runs"][-1]["finished_at"] = utc_now()
    manifest.data["runs"][-1]["summary"] = summary.line()
    manifest.data["model_calls"] = model_calls_summary(manifest.trials)
    finished = all(is_complete(run_dir / "trials" / plan.trial_id) for plan in design.trials)
    manifest.data["finished_at"] = utc_now() if finished else None
    if summary.degraded and not summary.exit_code:
        summary.exit_code = EXIT_DEGRADED
    manifest.save()
    return summary


def _account(summary: RunSummary, outcome: TrialOutcome, spent: dict, status: str, error: str) -> None:
    summary.count(outcome.trial_id, status, error, outcome.calls, outcome.cache_hits)
    summary.cost_usd += outcome.cost_usd
    summary.tokens += outcome.prompt_tokens + outcome.completion_tokens
    spent["usd"] += outcome.cost_usd
    spent["tokens"] += outcome.prompt_tokens + outcome.completion_tokens
