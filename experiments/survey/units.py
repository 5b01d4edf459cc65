"""A survey run's units: one per provider x condition x chunk of personas, planned, asked and returned as data.

The model under each conditioning style, and each reference control under the ``reference``
condition, asks its chunk of personas every question (:func:`unit_requests`); :func:`run_unit` runs
one unit in a worker and returns its responses, provenance and prompt tables as a
:class:`~pvsst.experiments.run.kernel.UnitResult` (the run kernel writes them). Every call is seeded
(:func:`pvsst.experiments.survey.prompts.survey_request_seed`) and schema-constrained to the option
codes; a reply that fails the schema after the allowed attempts is kept with ``parse_ok = false`` and
no answer.

Examples
--------
>>> from pvsst.experiments.survey.spec import load_survey
>>> spec = load_survey("experiments/surveys/gss2018_spending.yaml")
>>> units = plan_units(spec, [f"p{i}" for i in range(60)])
>>> units[0].unit_id, len(units[0].persona_ids), len(units[1].persona_ids)
('embedded-smollm2-135m__direct__0000', 50, 10)
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import pandas as pd

from pvsst.analysis.survey.units import failed_calls
from pvsst.core.errors import InputError
from pvsst.experiments.run.kernel import UnitResult, lost_units
from pvsst.experiments.run.worker_gateway import GatewaySettings, worker_gateway
from pvsst.experiments.survey.controls import reference_line
from pvsst.experiments.survey.elicitation import reply_answer
from pvsst.experiments.survey.personas import REFERENCE_PREFIX, answer_columns
from pvsst.experiments.survey.prompts import (
    answer_schema,
    option_order,
    question_prompt,
    survey_request_seed,
    system_prompt,
)
from pvsst.experiments.survey.scenarios_section import SCENARIO_COLUMN, scenario_list
from pvsst.experiments.survey.spec import ConditionSpec, SurveySpec, survey_from_canonical
from pvsst.sim.llm.cache import ReplayMiss
from pvsst.sim.llm.option_probabilities import distribution_schema
from pvsst.sim.llm.prompt_table import prompt_table
from pvsst.sim.llm.steering import Steering
from pvsst.sim.llm.types import CALL_RECORD_FIELDS, LLMRequest

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
    steerings: dict[str, Steering] | None = None  # each persona's identity injection, under a steered condition


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


def unit_requests(spec: SurveySpec, unit: SurveyUnit, personas: pd.DataFrame,
                  steerings: dict[str, Steering] | None = None) -> list[tuple[LLMRequest, tuple[str, ...]]]:
    """Every request of a unit with the option codes in the order its prompt lists them
    (:func:`scenario_requests` without the scenarios)."""
    return [(request, order) for request, order, _ in scenario_requests(spec, unit, personas, steerings)]


def scenario_requests(spec: SurveySpec, unit: SurveyUnit, personas: pd.DataFrame,
                      steerings: dict[str, Steering] | None = None,
                      ) -> list[tuple[LLMRequest, tuple[str, ...], str | None]]:
    """Every request of a unit (persona x scenario x question x sample, in that order) with the option
    codes in the order its prompt lists them and its scenario's id (``None`` without ``scenarios``).

    A scenario's vignette (:mod:`pvsst.experiments.survey.scenarios_section`) comes before the
    question's wording, and its id enters the request seed. With ``steerings`` each persona's requests
    carry its steering.

    ``sample``: ``samples_per_persona`` (a cell run: ``cells.k``) requests per persona x question.
    ``logprobs``: one request that scores the reply codes (``option_scoring``) at temperature 0 (a served
    model's answer path; the scores are the model's own probabilities). ``verbalized``: one request for a
    probability per code, with room for the JSON (``max_tokens`` at least 24 + 12 per code).
    """
    condition = condition_by_id(spec, unit.condition)
    scripted = unit.provider.startswith("scripted/")
    temperature = condition.temperature if condition.temperature is not None else spec.sampling.temperature
    method = condition.elicitation
    samples = spec.draws_per_persona if method == "sample" else 1
    by_id = personas.set_index("persona_id")
    values = {a.question: a.values for a in answer_columns(spec)}
    system = {"role": "system", "content": system_prompt(spec, condition)}
    read = (
        [q.column for q in spec.questions]
        + [spec.data.respondent_id]
        + ([spec.data.weight] if spec.data.weight else [])
    )
    recipe = None if spec.data.plain_rdataset(read) else spec.data.recipe()
    # The values a persona's row holds, read column by column (a row lookup per persona builds a whole
    # mixed-type row: most of a large unit's time); each is the element the row would hold.
    column = {name: by_id[name] for name in by_id.columns}
    scenarios = scenario_list(spec.scenarios) if spec.scenarios is not None else [None]
    requests = []
    for persona_id in unit.persona_ids:
        at = by_id.index.get_loc(persona_id)
        card = column[f"card_{condition.persona_card}"].iloc[at] if condition.persona_card else None
        # an audit's matched sets share their base persona's request seeds (pvsst.experiments.audit.population)
        seed_key = str(column["request_key"].iloc[at]) if "request_key" in column else persona_id
        steering = steerings[persona_id] if steerings is not None else None
        for scenario, question in itertools.product(scenarios, spec.questions):
            reference = None
            if scripted:
                reference = reference_line(spec.data.label, spec.data.respondent_id,
                                           str(column[REFERENCE_PREFIX + question.id].iloc[at]), question.column,
                                           values[question.id], spec.data.weight, recipe)
            order = option_order(spec, question, seed_key)
            asked = question
            if scenario is not None and scenario.vignette:
                asked = question.model_copy(update={"wording": f"{scenario.vignette}\n\n{question.wording}"})
            user = {"role": "user", "content": question_prompt(spec, asked, condition, card, reference, order)}
            question_key = question.id if scenario is None else f"{question.id}|{scenario.id}"
            codes = spec.reply_codes(question)
            shape = {"schema": answer_schema(codes), "temperature": temperature, "max_tokens": spec.sampling.max_tokens}
            if method == "logprobs":
                shape.update(option_scoring=codes, temperature=0.0)
            elif method == "verbalized":
                shape.update(
                    schema=distribution_schema(codes), max_tokens=max(spec.sampling.max_tokens, 24 + 12 * len(codes))
                )
            for sample in range(samples):
                requests.append((LLMRequest(
                    model_name=unit.provider, messages=(system, user), **shape,
                    seed=survey_request_seed(spec.seed, unit.condition, seed_key, question_key, sample),
                    trial_id=unit.unit_id, round=sample, agent_id=persona_id, phase=question.id,
                    steering=steering), order, None if scenario is None else scenario.id))
    return requests


def run_unit(task: SurveyUnitTask) -> UnitResult:
    """Run one unit in this process; a done result carries its tables (the run kernel writes them), a
    replay miss comes back as a status. Nothing is written here."""
    started = time.perf_counter()
    spec = survey_from_canonical(task.spec)
    unit = task.unit
    personas = task.personas
    requests, orders, scenarios = zip(*scenario_requests(spec, unit, personas, task.steerings))
    gateway = worker_gateway(task.gateway)
    try:
        results = gateway.run(requests)
    except ReplayMiss as err:
        return UnitResult(unit.unit_id, ReplayMiss.status, str(err))
    gateway.drain_records()
    references = personas.set_index("persona_id")
    method = condition_by_id(spec, unit.condition).elicitation
    rows = []
    for request, order, scenario, result in zip(requests, orders, scenarios, results):
        answer, probabilities = reply_answer(result.parsed if result.ok else None, method)
        record = result.record
        rows.append(
            {
                "unit_id": unit.unit_id,
                "provider": unit.provider,
                "condition": unit.condition,
                "elicitation": method,
                "persona_id": request.agent_id,
                "reference_respondent_id": str(references.at[request.agent_id, REFERENCE_PREFIX + request.phase]),
                "question": request.phase,
                "sample": request.round,
                "answer": answer,
                "probabilities": probabilities,
                "parse_ok": answer is not None,
                "status": record.status,
                "call_id": record.call_id,
                "request_seed": request.seed,
                "cached": record.cached,
                "attempts": record.attempts,
                "latency_s": record.latency_s,
                "option_order": "|".join(order),
                "prompt_sha256": request.prompt_sha256(),
                SCENARIO_COLUMN: scenario,
            }
        )
    # the scenario column only in a scenario run: other runs keep their tables as they were
    responses = pd.DataFrame(rows, columns=list(RESPONSE_COLUMNS) + ([SCENARIO_COLUMN] if spec.scenarios else []))
    calls = pd.DataFrame([r.record.to_dict() for r in results], columns=list(CALL_RECORD_FIELDS))
    parse_failures = int((~responses["parse_ok"]).sum())
    return UnitResult(unit.unit_id, "done", calls=len(results), cache_hits=int(calls["cached"].sum()),
                      failed_calls=int(failed_calls(responses).sum()), elapsed_s=time.perf_counter() - started,
                      tables={"responses": responses, "llm_calls": calls, "prompts": prompt_table(requests)},
                      record={"parse_failures": parse_failures}, counts={"parse_failures": parse_failures})


class SurveyUnitWorker:
    """The survey job's worker (:class:`~pvsst.experiments.run.kernel.UnitWorker`): one unit's result per
    payload (:func:`run_unit`; a bad unit is a failed result)."""

    def run(self, task: SurveyUnitTask) -> list[UnitResult]:
        try:
            return [run_unit(task)]
        except (InputError, ValueError, KeyError) as err:
            return [UnitResult(task.unit.unit_id, "failed", f"{type(err).__name__}: {err}".splitlines()[0])]

    def lost(self, task: SurveyUnitTask, error: BaseException) -> list[UnitResult]:
        """The unit of a lost worker failed (a rerun asks it again; its finished calls are cached)."""
        return lost_units([task.unit.unit_id], error)
