"""The survey runner: instrument -> personas x questions x conditions through the gateway -> run store.

A survey run is split into units, one per provider x condition x chunk of personas (the model under
each conditioning style; each reference control under the ``reference`` condition). A unit's
responses and provenance come back from the worker as tables, and the driver (the run store's only
writer) writes them atomically (temp dir, rename, DONE last)::

    RUN/survey.json            the effective instrument (command-line overrides applied) and its sha256
    RUN/scoring.json           what ``pvsst.analysis.survey.scoring`` needs to score the run
    RUN/manifest.json          versions, runs, unit statuses (pvsst.experiments.run.manifest.RunManifest)
    RUN/human.parquet          the real answers, coded; RUN/personas.parquet  the personas asked
    RUN/cells.parquet          a cell run's cells and their population per geography
    RUN/cache.sqlite           the response cache (resumes replay finished calls)
    RUN/units/<unit_id>/responses.parquet llm_calls.parquet prompts.parquet DONE

``prompts.parquet`` is the unit's prompt table (:func:`pvsst.sim.llm.prompt_table.prompt_table`): the full
system and user text of every distinct prompt, keyed by ``prompt_sha256``, the column every response
row carries. The instrument file must be frozen (``pvsst prereg freeze``) and unchanged since, or the
run is given ``--deviation TEXT``; command-line overrides (``--model``, ``--personas``, ``--n``,
``--seed``) are recorded in the manifest as deviations naming the fields they changed.

A unit (or a model under a condition, over all its units) whose share of failed calls (no usable
reply; the oracle's by-design refusals aside) exceeds the preregistered
``analysis.parse_failure_threshold`` is ``degraded``: recorded in the manifest, named with its share
by ``pvsst survey run``, which then exits 1 (a resumed run stays degraded).

A rerun into the same directory skips units with DONE; a different instrument there is refused.
Every call is seeded (:func:`pvsst.experiments.survey.prompts.survey_request_seed`) and schema-constrained
to the option codes; a reply that fails the schema after the allowed attempts is kept with
``parse_ok = false`` and no answer.

Examples
--------
>>> summary = run_survey("experiments/surveys/gss2018_spending.yaml", "/tmp/survey-run",
...                      model="scripted/uniform", n=20, progress=False)  # doctest: +SKIP
>>> summary.line()  # doctest: +SKIP
'16 units: 16 done, 0 failed, 0 skipped; 3200 calls, 0 cache hits, 0 parse failures'
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import ClassVar
from pathlib import Path

import pandas as pd
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pvsst.core.atomic import atomic_file, write_json
from pvsst.core.errors import InputError
from pvsst.experiments.run.executors import GatewaySettings, make_executor, worker_gateway
from pvsst.experiments.run.manifest import RunManifest, environment, utc_now
from pvsst.experiments.run.run_guard import guarded_run, preparing, remove_staging, resume_command
from pvsst.experiments.run.runner import RunSummary
from pvsst.experiments.survey.cell_population import CELLS_FILE
from pvsst.experiments.survey.personas import REFERENCE_PREFIX, answer_columns, asked_tables, human_table
from pvsst.experiments.survey.prompts import (answer_schema, option_order, question_prompt, survey_request_seed,
                                        system_prompt)
from pvsst.experiments.survey.spec import (ConditionSpec, SurveySpec, canonical_survey, load_survey, survey_from_canonical,
                                     survey_sha256, with_overrides)
from pvsst.experiments.survey.checks import check_data, check_runnable, data_record, data_sha256
from pvsst.experiments.survey.controls import reference_line
from pvsst.sim.llm.prompt_table import prompt_table
from pvsst.experiments.survey.elicitation import DISTRIBUTION_METHODS, reply_answer
from pvsst.sim.llm.option_probabilities import distribution_schema
from pvsst.sim.llm.cache import ReplayMiss
from pvsst.sim.llm.types import CALL_RECORD_FIELDS, LLMRequest
from pvsst.experiments.run.store import is_complete, write_table, write_table_directory
from pvsst.experiments.run.call_health import DEGRADED, degraded_line
from pvsst.analysis.survey.units import failed_calls

CACHE_FILE = "cache.sqlite"
SURVEY_FILE = "survey.json"
SCORING_FILE = "scoring.json"
REFERENCE_CONDITION = "reference"
RESPONSE_COLUMNS = ("unit_id", "provider", "condition", "elicitation", "persona_id", "reference_respondent_id",
                    "question", "sample", "answer", "probabilities", "parse_ok", "status", "call_id",
                    "request_seed", "cached", "attempts", "latency_s", "option_order", "prompt_sha256")


@dataclass(frozen=True)
class SurveyUnit:
    unit_id: str
    provider: str
    condition: str
    persona_ids: tuple[str, ...]


@dataclass(frozen=True)
class SurveyUnitTask:
    """Everything a worker needs to run one unit (plain data, picklable: no path of the run)."""

    spec: dict
    unit: SurveyUnit
    personas: pd.DataFrame  # the unit's rows of the run's persona table
    gateway: GatewaySettings


@dataclass
class UnitOutcome:
    unit_id: str
    status: str
    error: str = ""
    calls: int = 0
    cache_hits: int = 0
    parse_failures: int = 0
    failed_calls: int = 0  # no usable reply (parse failures, but not the oracle's by-design refusals)
    elapsed_s: float = 0.0
    tables: dict[str, pd.DataFrame] | None = None  # a done unit's tables, for the driver to write


@dataclass
class SurveyRunSummary(RunSummary):
    """The experiment runner's summary, counted in units, plus parse failures."""

    unit: ClassVar[str] = "units"
    parse_failures: int = 0
    degraded_models: int = 0  # the first lines of ``degraded`` name models, the rest units

    def spend(self) -> str:
        return f"{self.parse_failures} parse failures"

    def line(self) -> str:
        text = super().line()
        units = len(self.degraded) - self.degraded_models
        if self.degraded:  # count units as units; the degraded models come after
            text = text.replace(f"{len(self.degraded)} degraded, ", f"{units} degraded, " if units else "", 1)
        models = f" ({self.degraded_models} model(s) degraded)" if self.degraded_models else ""
        return text.replace(";", models + ";", 1) if models else text


# -- units ---------------------------------------------------------------------------------------

def reference_conditions(spec: SurveySpec) -> list[ConditionSpec]:
    """The controls' conditions: ``reference`` (sampled answers), plus ``reference_<method>`` for each
    other elicitation method a condition uses, so every method has its yardsticks."""
    methods = dict.fromkeys(["sample"] if any(c.elicitation == "sample" for c in spec.conditions) else [])
    methods.update(dict.fromkeys(c.elicitation for c in spec.conditions))
    return [ConditionSpec(id=REFERENCE_CONDITION if m == "sample" else f"{REFERENCE_CONDITION}_{m}", elicitation=m)
            for m in methods]


def condition_by_id(spec: SurveySpec, condition_id: str) -> ConditionSpec:
    """The condition ``condition_id`` of the spec, or one of the controls' reference conditions."""
    for condition in [*spec.conditions, *reference_conditions(spec)]:
        if condition.id == condition_id:
            return condition
    return ConditionSpec(id=condition_id)


def provider_conditions(spec: SurveySpec) -> list[tuple[str, ConditionSpec]]:
    """(model, condition) pairs: every model under every condition, then each control under each
    reference condition (:func:`reference_conditions`)."""
    pairs = [(model, condition) for model in spec.asked_models for condition in spec.conditions]
    pairs += [(f"scripted/{name}", reference) for reference in reference_conditions(spec) for name in spec.controls
              if f"scripted/{name}" not in spec.asked_models]
    return pairs


def plan_units(spec: SurveySpec, persona_ids: list[str]) -> list[SurveyUnit]:
    size = spec.execution.chunk_size
    chunks = [tuple(persona_ids[i:i + size]) for i in range(0, len(persona_ids), size)]
    return [SurveyUnit(f"{provider.replace('/', '-')}__{condition.id}__{index:04d}", provider, condition.id, chunk)
            for provider, condition in provider_conditions(spec) for index, chunk in enumerate(chunks)]


def unit_requests(spec: SurveySpec, unit: SurveyUnit,
                  personas: pd.DataFrame) -> list[tuple[LLMRequest, tuple[str, ...]]]:
    """Every request of a unit (persona x question x sample, in that order) with the option codes in
    the order its prompt lists them.

    ``sample``: ``samples_per_persona`` (a cell run: ``cells.k``) requests per persona x question.
    ``logprobs``: one request that scores the reply codes (``option_scoring``) at temperature 0 (a
    served model's answer path; the scores are the model's own probabilities). ``verbalized``: one request for a probability per code,
    with room for the JSON (``max_tokens`` at least 24 + 12 per code).
    """
    condition = condition_by_id(spec, unit.condition)
    scripted = unit.provider.startswith("scripted/")
    temperature = condition.temperature if condition.temperature is not None else spec.sampling.temperature
    method = condition.elicitation
    samples = spec.draws_per_persona if method == "sample" else 1
    by_id = personas.set_index("persona_id")
    values = {a.question: a.values for a in answer_columns(spec)}
    system = {"role": "system", "content": system_prompt(spec, condition)}
    read = [q.column for q in spec.questions] + [spec.data.respondent_id] + ([spec.data.weight] if spec.data.weight else [])
    recipe = None if spec.data.plain_rdataset(read) else spec.data.recipe()
    requests = []
    for persona_id in unit.persona_ids:
        row = by_id.loc[persona_id]
        card = row[f"card_{condition.persona_card}"] if condition.persona_card else None
        # an audit's matched sets share their base persona's request seeds (pvsst.experiments.survey.audit_personas)
        seed_key = str(row["request_key"]) if "request_key" in row.index else persona_id
        for question in spec.questions:
            reference = None
            if scripted:
                reference = reference_line(spec.data.label, spec.data.respondent_id,
                                           str(row[REFERENCE_PREFIX + question.id]), question.column,
                                           values[question.id], spec.data.weight, recipe)
            order = option_order(spec, question, seed_key)
            user = {"role": "user", "content": question_prompt(spec, question, condition, card, reference, order)}
            codes = spec.reply_codes(question)
            shape = {"schema": answer_schema(codes), "temperature": temperature, "max_tokens": spec.sampling.max_tokens}
            if method == "logprobs":
                shape.update(option_scoring=codes, temperature=0.0)
            elif method == "verbalized":
                shape.update(schema=distribution_schema(codes), max_tokens=max(spec.sampling.max_tokens, 24 + 12 * len(codes)))
            for sample in range(samples):
                requests.append((LLMRequest(
                    model_name=unit.provider, messages=(system, user), **shape,
                    seed=survey_request_seed(spec.seed, unit.condition, seed_key, question.id, sample),
                    trial_id=unit.unit_id, round=sample, agent_id=persona_id, phase=question.id), order))
    return requests


def _write_unit(run_dir: Path, unit_id: str, tables: dict[str, pd.DataFrame]) -> None:
    write_table_directory(run_dir / "units", unit_id, tables)


def run_unit(task: SurveyUnitTask) -> UnitOutcome:
    """Run one unit in this process; a done outcome carries its tables (the driver writes them), a replay
    miss comes back as a status. Nothing is written here."""
    started = time.perf_counter()
    spec = survey_from_canonical(task.spec)
    unit = task.unit
    personas = task.personas
    requests, orders = zip(*unit_requests(spec, unit, personas))
    gateway = worker_gateway(task.gateway)
    try:
        results = gateway.run(requests)
    except ReplayMiss as err:
        return UnitOutcome(unit.unit_id, ReplayMiss.status, str(err))
    gateway.drain_records()
    references = personas.set_index("persona_id")
    method = condition_by_id(spec, unit.condition).elicitation
    rows = []
    for request, order, result in zip(requests, orders, results):
        answer, probabilities = reply_answer(result.parsed if result.ok else None, method)
        record = result.record
        rows.append({"unit_id": unit.unit_id, "provider": unit.provider, "condition": unit.condition,
                     "elicitation": method, "persona_id": request.agent_id,
                     "reference_respondent_id": str(references.at[request.agent_id, REFERENCE_PREFIX + request.phase]),
                     "question": request.phase, "sample": request.round, "answer": answer,
                     "probabilities": probabilities, "parse_ok": answer is not None, "status": record.status, "call_id": record.call_id,
                     "request_seed": request.seed, "cached": record.cached, "attempts": record.attempts,
                     "latency_s": record.latency_s,
                     "option_order": "|".join(order), "prompt_sha256": request.prompt_sha256()})
    responses = pd.DataFrame(rows, columns=list(RESPONSE_COLUMNS))
    calls = pd.DataFrame([r.record.to_dict() for r in results], columns=list(CALL_RECORD_FIELDS))
    return UnitOutcome(unit.unit_id, "done", calls=len(results), cache_hits=int(calls["cached"].sum()),
                       parse_failures=int((~responses["parse_ok"]).sum()),
                       failed_calls=int(failed_calls(responses).sum()), elapsed_s=time.perf_counter() - started,
                       tables={"responses": responses, "llm_calls": calls, "prompts": prompt_table(requests)})


def _guarded(task: SurveyUnitTask) -> UnitOutcome:
    try:
        return run_unit(task)
    except (InputError, ValueError, KeyError) as err:
        return UnitOutcome(task.unit.unit_id, "failed", f"{type(err).__name__}: {err}".splitlines()[0])


# -- the run -------------------------------------------------------------------------------------

def _atomic_parquet(frame: pd.DataFrame, path: Path) -> None:
    with atomic_file(path) as tmp:
        write_table(frame, tmp)


def scoring_config(spec: SurveySpec) -> dict:
    """The plain-data description of the instrument that ``pvsst.analysis.survey.scoring`` reads."""
    return {"questions": [{"id": q.id, "codes": list(q.codes), "ordinal": q.ordinal} for q in spec.questions],
            "nonsubstantive_code": spec.non_substantive.code, "axes": [g.axis for g in spec.grouping],
            "settings": spec.analysis.model_dump(mode="json")}


def prepare_run(spec: SurveySpec, run_dir: Path) -> pd.DataFrame:
    """Write (or check) the run's instrument, scoring config, real answers and personas; return personas."""
    digest = survey_sha256(spec)
    survey_path = run_dir / SURVEY_FILE
    if survey_path.is_file():
        stored = json.loads(survey_path.read_text(encoding="utf-8"))
        if stored.get("sha256") != digest:
            raise InputError(run_dir, SURVEY_FILE, "this run directory holds a run of a different instrument "
                             f"(stored {str(stored.get('sha256'))[:12]}, now {digest[:12]}); use a new --out")
        return pd.read_parquet(run_dir / "personas.parquet")
    human = human_table(spec)  # validates the instrument against the data before anything is written
    personas, cells = asked_tables(spec, human)
    run_dir.mkdir(parents=True, exist_ok=True)
    _atomic_parquet(human, run_dir / "human.parquet")
    if cells is not None:  # a cell run: the population's cells and their counts per geography
        _atomic_parquet(cells, run_dir / CELLS_FILE)
    _atomic_parquet(personas, run_dir / "personas.parquet")
    write_json(run_dir / SCORING_FILE, scoring_config(spec))
    write_json(survey_path, {"sha256": digest, "spec": canonical_survey(spec)})
    return pd.read_parquet(run_dir / "personas.parquet")  # as stored: a resumed run sends the same rows


def _deviations(spec_path: Path, file_spec: SurveySpec, spec: SurveySpec, deviation: str | None,
                overrides: dict) -> tuple[list[dict], Lock | None, dict]:
    """The deviation records of this run (lock check, data check, then command-line overrides), the
    lock (or ``None``) and the frozen and current data fingerprints."""
    from pvsst.experiments.run.runner import check_frozen
    from pvsst.experiments.spec.prereg import changed_fields, read_lock

    lock = read_lock(spec_path)  # read once; the instrument as its file says, against its lock
    _, record = check_frozen(canonical_survey(file_spec), lock, spec_path, deviation)
    data = {"frozen": lock.data if lock else {}, "current": data_record(spec)}
    changed = check_data(data["frozen"], data["current"], deviation)
    if record is not None and changed is not None:
        record.update(changed)
    records = [record or changed] if (record or changed) is not None else []
    given = {name: value for name, value in overrides.items() if value is not None}
    if given:
        changes = changed_fields(canonical_survey(file_spec), canonical_survey(spec))
        if changes:
            records.append({"text": "command-line overrides", "overrides": given, "changed_fields": changes,
                            "frozen_sha256": survey_sha256(file_spec), "current_sha256": survey_sha256(spec),
                            "at": utc_now()})
    return records, lock, data


def _same(a: dict, b: dict) -> bool:
    keys = ("text", "overrides", "changed_fields", "frozen_sha256", "current_sha256", "current_data_sha256")
    return all(a.get(k) == b.get(k) for k in keys)


def run_survey(spec_path: str | Path, run_dir: str | Path, *, model: str | list[str] | None = None,
               personas: str | None = None, n: int | None = None, seed: int | None = None,
               workers: int | None = None, replay_only: bool = False, deviation: str | None = None,
               progress: bool = True, elicitation: str | None = None) -> SurveyRunSummary:
    """Run (or resume) a frozen survey instrument into ``run_dir``; see the module docstring."""
    spec_path, run_dir = Path(spec_path), Path(run_dir)
    file_spec = load_survey(spec_path)
    spec = with_overrides(file_spec, model=model or None, personas=personas, n=n, seed=seed, elicitation=elicitation)
    check_runnable(spec)
    if workers is not None and workers < 1:
        raise InputError("--workers", str(workers), "must be >= 1")
    deviations, lock, data = _deviations(spec_path, file_spec, spec, deviation,
                                         {"model": model or None, "personas": personas, "n": n,
                                          "seed": seed, "elicitation": elicitation})
    given = [("--model", m) for m in ([model] if isinstance(model, str) else model or [])] + [
        (flag, value) for flag, value in (("--personas", personas), ("--n", n), ("--seed", seed),
                                          ("--elicitation", elicitation)) if value is not None]
    resume = resume_command(["survey", "run", spec_path, *[w for pair in given for w in pair]], run_dir, deviation)
    with preparing(run_dir, resume):
        persona_frame = prepare_run(spec, run_dir)
    units = plan_units(spec, persona_frame["persona_id"].astype(str).tolist())
    manifest = RunManifest.load(run_dir) or RunManifest.create(run_dir, survey_id=spec.id,
                                                                survey_path=str(spec_path))
    manifest.data["survey_sha256"] = survey_sha256(spec)
    manifest.data.update(frozen_sha256=lock.spec_sha256 if lock else None,
                         frozen_at=lock.frozen_at if lock else None, instrument_sha256=survey_sha256(file_spec),
                         models=list(spec.asked_models), data_sha256=data_sha256(spec), data=data)
    recorded = manifest.data.setdefault("deviations", [])
    recorded += [d for d in deviations if not any(_same(d, old) for old in recorded)]
    manifest.data["runs"].append({"started_at": utc_now(), "workers": workers or spec.execution.workers,
                                  "replay_only": replay_only, "versions": environment()})
    units_status = manifest.data.setdefault("units", {})
    settings = GatewaySettings(
        cache_path=str((run_dir / CACHE_FILE).resolve()), replay_only=replay_only,
        config=spec.execution.gateway_config(), max_attempts=spec.sampling.max_attempts)
    summary = SurveyRunSummary(total=len(units))
    threshold = spec.analysis.parse_failure_threshold
    pending = []
    for unit in units:
        if is_complete(run_dir / "units" / unit.unit_id):
            summary.skipped += 1
            entry = units_status.setdefault(unit.unit_id, {})
            if entry.get("status") == DEGRADED:  # still degraded: resuming does not make it a success
                summary.degraded.append(degraded_line(unit.unit_id, entry, threshold))
            else:
                entry["status"] = "done"
        else:
            pending.append(unit)
    canonical = canonical_survey(spec)
    by_id = persona_frame.assign(_key=persona_frame["persona_id"].astype(str)).set_index("_key", drop=True)
    tasks = (SurveyUnitTask(canonical, unit, by_id.loc[list(unit.persona_ids)].reset_index(drop=True), settings)
             for unit in pending)
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("{task.fields[last]}"), disable=not progress)
    with guarded_run(manifest, what=f"survey {spec.id}", unit="units", total=len(units), resume=resume,
                     finished=lambda: sum(is_complete(run_dir / "units" / u.unit_id) for u in units),
                     cache_path=run_dir / CACHE_FILE):
        _run_units(run_dir, spec, settings, tasks, workers, manifest, summary, units_status, bar)
    models = _degraded_models(units, units_status, threshold)
    summary.degraded[:0], summary.degraded_models = models, len(models)
    manifest.data["degraded_models"] = models
    manifest.data["runs"][-1].update(finished_at=utc_now(), summary=summary.line())
    manifest.save()
    return summary


def _run_units(run_dir: Path, spec: SurveySpec, settings: GatewaySettings, tasks, workers: int | None,
               manifest: RunManifest, summary: SurveyRunSummary, units_status: dict, bar: Progress) -> None:
    threshold = spec.analysis.parse_failure_threshold
    manifest.save()
    remove_staging(run_dir / "units")  # a unit a killed run was writing
    settings.create_cache()
    executor = make_executor("local", workers or spec.execution.workers)
    try:
        with bar:
            bar_id = bar.add_task(spec.id, total=summary.total, completed=summary.skipped, last="")
            for outcome in executor.map(_guarded, tasks):
                if outcome.tables is not None:  # the driver is the run store's only writer
                    _write_unit(run_dir, outcome.unit_id, outcome.tables)
                    outcome.tables = None
                share = outcome.failed_calls / outcome.calls if outcome.calls else 0.0
                status = DEGRADED if outcome.status == "done" and share > threshold else outcome.status
                units_status[outcome.unit_id] = {"status": status, "error": outcome.error, "calls": outcome.calls,
                                                 "cache_hits": outcome.cache_hits,
                                                 "parse_failures": outcome.parse_failures,
                                                 "failed_calls": outcome.failed_calls, "failed_share": round(share, 6),
                                                 "elapsed_s": round(outcome.elapsed_s, 3), "finished_at": utc_now()}
                _account(summary, outcome, status, degraded_line("", units_status[outcome.unit_id], threshold)[2:]
                         if status == DEGRADED else outcome.error)
                manifest.save()
                bar.update(bar_id, advance=1, last=f"{outcome.unit_id}: {outcome.status}")
                if outcome.status == ReplayMiss.status:
                    summary.stopped, summary.exit_code = outcome.error, ReplayMiss.exit_code
                    break
    except BaseException:  # Ctrl-C, SIGTERM, a failed write: stop the workers, do not wait for them
        executor.close(abort=True)
        raise
    executor.close()


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


def _account(summary: SurveyRunSummary, outcome: UnitOutcome, status: str, error: str) -> None:
    summary.count(outcome.unit_id, status, error, outcome.calls, outcome.cache_hits)
    summary.parse_failures += outcome.parse_failures
