"""The survey runner: instrument -> personas x questions x conditions through the gateway -> run store.

A survey run is split into units, one per provider x condition x chunk of personas
(:mod:`pvsst.experiments.survey.units`). ``run_survey`` opens the instrument once, writes its inputs,
asks :func:`~pvsst.experiments.survey.personas.asked_tables` which personas (or cells) are asked, and hands the
units to the run kernel (:mod:`pvsst.experiments.run.kernel`), the run store's only writer::

    RUN/survey.json            the effective instrument (command-line overrides applied) and its sha256
    RUN/scoring.json           what ``pvsst.analysis.survey.scoring`` needs to score the run
    RUN/manifest.json          versions, runs, unit statuses (pvsst.experiments.run.manifest.RunManifest)
    RUN/human.parquet          the real answers, coded; RUN/personas.parquet  the personas asked
    RUN/cells.parquet          a cell run's cells and their population per geography
    RUN/scenarios.parquet      a scenario run's scenarios (pvsst.experiments.survey.scenarios_section)
    RUN/cache.sqlite           the response cache (resumes replay finished calls)
    RUN/units/<unit_id>/responses.parquet llm_calls.parquet prompts.parquet DONE

``prompts.parquet`` is the unit's prompt table (:func:`pvsst.sim.llm.prompt_table.prompt_table`): the full
system and user text of every distinct prompt, keyed by ``prompt_sha256``, the column every response
row carries. The instrument file must be frozen (``pvsst prereg freeze``) and unchanged since, or the
run is given ``--deviation TEXT``; command-line overrides (``--model``, ``--personas``, ``--n``,
``--seed``, and the gateway's ``--max-concurrency`` ...) are recorded in the manifest as deviations
naming the fields they changed.

A unit (or a model under a condition, over all its units) whose share of failed calls (no usable
reply; the oracle's by-design refusals aside) exceeds the preregistered
``analysis.parse_failure_threshold`` is ``degraded``: recorded in the manifest, named with its share
by ``pvsst survey run``, which then exits 1 (a resumed run stays degraded).

A rerun into the same directory skips units with DONE; a different instrument there is refused.

Examples
--------
>>> summary = run_survey("experiments/surveys/gss2018_spending.yaml", "/tmp/survey-run",
...                      model="scripted/uniform", n=20, progress=False)  # doctest: +SKIP
>>> summary.line()  # doctest: +SKIP
'16 units: 16 done, 0 failed, 0 skipped; 3200 calls, 0 cache hits, 0 parse failures'
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pandas as pd

from pvsst.core.atomic import atomic_file, write_json
from pvsst.core.errors import InputError
from pvsst.core.input_files import read_json
from pvsst.core.run_folder import claimed_run_folder
from pvsst.core.run_layout import CACHE, HUMAN, MANIFEST, PERSONAS, SCENARIOS, SCORING, SURVEY, UNITS
from pvsst.experiments.run.call_health import degraded_line
from pvsst.experiments.run.frozen import check_frozen, override_record
from pvsst.experiments.run.kernel import RunJob, run_units
from pvsst.experiments.run.manifest import RunManifest
from pvsst.experiments.run.run_guard import gateway_words, preparing, resume_command
from pvsst.experiments.run.store import write_table
from pvsst.experiments.run.summary import DEGRADED, RunSummary
from pvsst.experiments.run.worker_gateway import GatewaySettings
from pvsst.experiments.survey.cell_population import CELLS_FILE
from pvsst.experiments.survey.checks import check_data, check_runnable, data_record, data_sha256
from pvsst.experiments.survey.injection import condition_steerings, injection_files, injection_hashes
from pvsst.experiments.survey.personas import asked_tables, human_table
from pvsst.experiments.survey.scenarios_section import scenario_table
from pvsst.experiments.survey.spec import SurveySpec, canonical_survey, load_survey, survey_sha256, with_overrides
from pvsst.experiments.survey.units import SurveyUnit, SurveyUnitTask, SurveyUnitWorker, plan_units


@dataclass
class SurveyRunSummary(RunSummary):
    """The run kernel's summary, counted in units, plus parse failures."""

    unit: ClassVar[str] = "units"
    parse_failures: int = 0
    degraded_models: int = 0  # the first lines of ``degraded`` name models, the rest units

    def count(self, name: str, status: str, error: str, calls: int, cache_hits: int, cost_usd: float = 0.0,
              tokens: int = 0, parse_failures: int = 0) -> None:
        super().count(name, status, error, calls, cache_hits, cost_usd, tokens)
        self.parse_failures += parse_failures

    def spend(self) -> str:
        return f"{self.parse_failures} parse failures"

    def line(self) -> str:
        text = super().line()
        units = len(self.degraded) - self.degraded_models
        if self.degraded:  # count units as units; the degraded models come after
            text = text.replace(f"{len(self.degraded)} degraded, ", f"{units} degraded, " if units else "", 1)
        models = f" ({self.degraded_models} model(s) degraded)" if self.degraded_models else ""
        return text.replace(";", models + ";", 1) if models else text


def run_survey(spec_path: str | Path, run_dir: str | Path, *, model: str | list[str] | None = None,
               personas: str | None = None, n: int | None = None, seed: int | None = None,
               workers: int | None = None, replay_only: bool = False, deviation: str | None = None,
               progress: bool = True, elicitation: str | None = None, gateway: dict | None = None,
               retry_degraded: bool = False) -> SurveyRunSummary:
    """Run (or resume) a frozen survey instrument into ``run_dir``; see the module docstring."""
    spec_path, run_dir = Path(spec_path), Path(run_dir)
    options = {"model": model or None, "personas": personas, "n": n, "seed": seed, "elicitation": elicitation}
    file_spec, spec = open_survey(spec_path, options, gateway or {})
    if workers is not None and workers < 1:
        raise InputError("--workers", str(workers), "must be >= 1")
    deviations, lock, data = _deviations(spec_path, file_spec, spec, deviation, options, gateway or {})
    command = ["survey", "run", spec_path, *_option_words(options), *gateway_words(gateway or {})]
    inputs = None
    if not (run_dir / SURVEY).is_file():  # the data, personas and steerings are checked before anything is written
        human = human_table(spec)
        inputs = (human, *asked_tables(spec, human))
        condition_steerings(spec, inputs[1], spec_path.parent)
    with claimed_run_folder(run_dir):
        manifest = survey_manifest(run_dir, spec_path, file_spec, spec, lock, data)
        manifest.add_deviations(deviations, same=_same)
        with preparing(run_dir, resume_command(command, run_dir, deviation)):
            if inputs is not None:
                manifest.save()  # before the inputs: a folder holding a run's files has its manifest
                write_inputs(spec, run_dir, *inputs)
            asked = read_inputs(spec, run_dir)
        units = plan_units(spec, asked["persona_id"].astype(str).tolist())
        steerings = condition_steerings(spec, asked, spec_path.parent)
        return run_units(survey_job(spec, run_dir, manifest, units, asked, workers=workers, replay_only=replay_only,
                                    command=command, deviation=deviation, progress=progress,
                                    retry_degraded=retry_degraded, steerings=steerings))


def survey_manifest(run_dir: Path, spec_path: Path, file_spec: SurveySpec, spec: SurveySpec, lock,
                    data: dict) -> RunManifest:
    """The run's manifest with the instrument recorded; a run directory of another instrument is refused,
    one of a study always."""
    digest = survey_sha256(spec)
    manifest = RunManifest.load(run_dir)
    if manifest is not None:
        manifest.require_kind("survey")
        if manifest.get("survey_sha256") not in (None, digest):
            raise InputError(run_dir / MANIFEST, "survey_sha256", "this run directory holds a run of a "
                             f"different instrument (recorded {str(manifest.get('survey_sha256'))[:12]}, now "
                             f"{digest[:12]}); use a new --out")
    manifest = manifest or RunManifest.create(run_dir, survey_id=spec.id, survey_path=str(spec_path))
    manifest.record(survey_sha256=digest, frozen_sha256=lock.spec_sha256 if lock else None,
                    frozen_at=lock.frozen_at if lock else None, instrument_sha256=survey_sha256(file_spec),
                    models=list(spec.asked_models), data_sha256=data_sha256(spec), data=data)
    return manifest


def open_survey(spec_path: Path, options: dict, gateway: dict) -> tuple[SurveySpec, SurveySpec]:
    """The instrument as its file says and as this run asks it (command-line overrides applied, the
    gateway's included), checked to be runnable."""
    file_spec = load_survey(spec_path)
    spec = with_overrides(file_spec, **options)
    if gateway:
        spec = spec.model_copy(update={"execution": spec.execution.with_options("command line", **gateway)})
    check_runnable(spec)
    return file_spec, spec


def _option_words(options: dict) -> list:
    model = options["model"]
    given = [("--model", m) for m in ([model] if isinstance(model, str) else model or [])] + [
        (f"--{name}", value) for name, value in options.items() if name != "model" and value is not None]
    return [word for pair in given for word in pair]


def survey_job(spec: SurveySpec, run_dir: Path, manifest: RunManifest, units: list[SurveyUnit],
               asked: pd.DataFrame, *, workers: int | None, replay_only: bool, command: list, deviation: str | None,
               progress: bool, retry_degraded: bool = False,
               steerings: dict[str, dict] | None = None) -> RunJob:
    """The run kernel's job for the survey's units (one payload per unit); ``steerings``: each steered
    condition's personas' steerings (:func:`pvsst.experiments.survey.injection.condition_steerings`)."""
    n_workers = workers or spec.execution.workers
    canonical = canonical_survey(spec)
    by_id = asked.assign(_key=asked["persona_id"].astype(str)).set_index("_key", drop=True)
    by_unit = {unit.unit_id: unit for unit in units}
    threshold = spec.analysis.parse_failure_threshold

    def payloads(pending, summary, each, settings):
        return (SurveyUnitTask(canonical, by_unit[u], by_id.loc[list(by_unit[u].persona_ids)].reset_index(drop=True),
                               settings, _unit_steerings(steerings, by_unit[u])) for u in pending)

    def finish(summary: SurveyRunSummary) -> None:
        models = _degraded_models(units, manifest.units(UNITS), threshold)
        summary.degraded[:0], summary.degraded_models = models, len(models)
        manifest.record(degraded_models=models)

    gateway = GatewaySettings(cache_path=str((run_dir / CACHE).resolve()), replay_only=replay_only,
                              config=spec.execution.gateway_config(), max_attempts=spec.sampling.max_attempts)
    return RunJob(run_dir=run_dir, manifest=manifest, section=UNITS, what=f"survey {spec.id}", label=spec.id,
                  unit_ids=[u.unit_id for u in units], worker=SurveyUnitWorker(), prepare=lambda job: payloads,
                  gateway=gateway, summary=SurveyRunSummary(total=len(units)), command=command, deviation=deviation,
                  threshold=threshold, workers=n_workers, session={"workers": n_workers}, finish=finish,
                  progress=progress, retry_degraded=retry_degraded)


# -- the run -------------------------------------------------------------------------------------

def _atomic_parquet(frame: pd.DataFrame, path: Path) -> None:
    with atomic_file(path) as tmp:
        write_table(frame, tmp)


def scoring_config(spec: SurveySpec) -> dict:
    """The plain-data description of the instrument that ``pvsst.analysis.survey.scoring`` reads."""
    return {"questions": [{"id": q.id, "codes": list(q.codes), "ordinal": q.ordinal} for q in spec.questions],
            "nonsubstantive_code": spec.non_substantive.code, "axes": [g.axis for g in spec.grouping],
            "settings": spec.analysis.model_dump(mode="json")}


def write_inputs(spec: SurveySpec, run_dir: Path, human: pd.DataFrame, personas: pd.DataFrame,
                 cells: pd.DataFrame | None = None) -> None:
    """Write the run's real answers, personas asked (a cell run: its cells, and their population per
    geography; a scenario run: its scenarios), scoring config and instrument (``survey.json`` last)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    _atomic_parquet(human, run_dir / HUMAN)
    if cells is not None:
        _atomic_parquet(cells, run_dir / CELLS_FILE)
    if spec.scenarios is not None:
        _atomic_parquet(scenario_table(spec.scenarios), run_dir / SCENARIOS)
    _atomic_parquet(personas, run_dir / PERSONAS)
    write_json(run_dir / SCORING, scoring_config(spec))
    write_json(run_dir / SURVEY, {"sha256": survey_sha256(spec), "spec": canonical_survey(spec)})


def read_inputs(spec: SurveySpec, run_dir: Path) -> pd.DataFrame:
    """The personas asked, as stored (a resumed run sends the same rows); a run directory of another
    instrument is refused."""
    digest = survey_sha256(spec)
    stored = read_json(run_dir / SURVEY, "instrument")
    if stored.get("sha256") != digest:
        raise InputError(run_dir, SURVEY, "this run directory holds a run of a different instrument "
                         f"(stored {str(stored.get('sha256'))[:12]}, now {digest[:12]}); use a new --out")
    return pd.read_parquet(run_dir / PERSONAS)


def _deviations(spec_path: Path, file_spec: SurveySpec, spec: SurveySpec, deviation: str | None,
                options: dict, gateway: dict) -> tuple[list[dict], object, dict]:
    """The deviation records of this run (lock check, data check, then command-line overrides), the
    lock (or ``None``) and the frozen and current data fingerprints."""
    files = injection_files(file_spec, spec_path.parent)  # the identity vectors, locked like study materials
    _, record, lock = check_frozen(canonical_survey(file_spec), spec_path, deviation, materials=injection_hashes(files),
                                   files=files)  # the file, against its lock
    data = {"frozen": lock.data if lock else {}, "current": data_record(spec)}
    changed = check_data(data["frozen"], data["current"], deviation)
    if record is not None and changed is not None:
        record.update(changed)
    records = [record or changed] if (record or changed) is not None else []
    override = override_record({**options, **gateway}, canonical_survey(file_spec), canonical_survey(spec),
                               survey_sha256(file_spec), survey_sha256(spec))
    return records + ([override] if override else []), lock, data


def _unit_steerings(steerings: dict[str, dict] | None, unit: SurveyUnit) -> dict | None:
    """The steerings of a unit's personas under its condition (``None`` for an unsteered condition)."""
    by_persona = (steerings or {}).get(unit.condition) if not unit.provider.startswith("scripted/") else None
    return None if by_persona is None else {p: by_persona[p] for p in unit.persona_ids}


def _same(a: dict, b: dict) -> bool:
    keys = ("text", "overrides", "changed_fields", "frozen_sha256", "current_sha256", "current_data_sha256")
    return all(a.get(k) == b.get(k) for k in keys)


def _degraded_models(units: list[SurveyUnit], status: dict, threshold: float) -> list[str]:
    """``model M | C: share ...`` for every model x condition whose failed share, over its finished
    units, exceeds ``threshold``."""
    totals: dict[str, list[int]] = {}
    for unit in units:
        entry = status.get(unit.unit_id) or {}
        if entry.get("status") in ("done", DEGRADED):
            tally = totals.setdefault(f"model {unit.provider} | {unit.condition}", [0, 0])
            tally[0] += int(entry.get("failed_calls") or 0)
            tally[1] += int(entry.get("calls") or 0)
    return [degraded_line(name, {"failed_share": failed / calls, "calls": calls}, threshold)
            for name, (failed, calls) in totals.items() if calls and failed / calls > threshold]
