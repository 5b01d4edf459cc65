"""Answering a population per cell is exact: the same distributions and estimates as asking every persona.

A 2,000-persona census population (CCES instrument, two questions, ``logprobs`` elicitation) is answered
twice by a scripted model whose option log-probabilities are a function of the prompt text alone
(``prompt_logprobs_provider``): once persona by persona, each persona printed by its cell's card (so
every member of a cell sends the identical prompt), and once cell by cell through ``pvsst survey run``
with a ``cells`` section. Every persona's distribution must equal its cell's to 1e-12, the national,
state and party estimates computed directly from the personas must equal the post-stratified ones
(:mod:`pvsst.analysis.survey.cells.poststratification`) to 1e-12, and the cell run must make exactly one call per
distinct cell x question (read from ``llm_calls.parquet``).
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from survey_helpers import CELL_ATTRIBUTES, cell_spec, write

from pvsst.analysis.survey.cells.poststratification import population_estimates
from pvsst.experiments.cli import main
from pvsst.experiments.run.worker_gateway import GatewaySettings
from pvsst.experiments.survey.personas import REFERENCE_PREFIX
from pvsst.experiments.survey.spec import canonical_survey, load_survey
from pvsst.experiments.survey.units import SurveyUnit, SurveyUnitTask, run_unit
from pvsst.personas.cell_cards import persona_cell_cards
from pvsst.personas.cells import cell_table
from pvsst.personas.synthesis import synthesize
from pvsst.sim.llm.providers.registry import register_scripted_provider

CONDITION = "persona_profile_logprobs"


@pytest.fixture(scope="module", autouse=True)
def _provider():
    register_scripted_provider("prompt_logprobs", "prompt_logprobs_provider:PromptLogprobsProvider")


def _distributions(responses: pd.DataFrame) -> pd.DataFrame:
    """One row per persona x question x option with its probability."""
    rows = [(r.persona_id, r.question, code, p) for r in responses.itertuples()
            for code, p in json.loads(r.probabilities).items()]
    return pd.DataFrame(rows, columns=["persona_id", "question", "option", "probability"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cell-exactness")
    path = write(directory, cell_spec())
    cell_run = directory / "cells"
    assert main(["survey", "run", str(path), "--out", str(cell_run)]) == 0
    spec = load_survey(path)
    population = synthesize(spec.personas.n, geography=spec.personas.geography, seed=spec.personas.seed).personas
    table = cell_table(population, CELL_ATTRIBUTES)
    personas = persona_cell_cards(table).rename(columns={"card": "card_profile"})
    # A scripted model's prompt ends with its reference respondent's line: each persona gets its cell's
    donors = pd.read_parquet(cell_run / "personas.parquet").set_index("cell_id")
    for question in spec.questions:
        column = REFERENCE_PREFIX + question.id
        personas[column] = donors[column].reindex(personas["cell_id"].astype(str)).to_numpy()
    unit = SurveyUnit("per_persona", spec.model, CONDITION, tuple(personas["persona_id"]))
    settings = GatewaySettings(cache_path=str(directory / "per-persona.sqlite"),
                               config=spec.execution.gateway_config())
    settings.create_cache()
    outcome = run_unit(SurveyUnitTask(canonical_survey(spec), unit, personas, settings))
    assert outcome.status == "done", outcome.error
    return {"spec": spec, "population": population, "table": table, "cell_run": cell_run,
            "per_persona": outcome.tables, "persona_cells": personas[["persona_id", "cell_id"]]}


def test_a_cell_run_calls_once_per_distinct_cell_and_question(runs):
    calls = pd.read_parquet(next(runs["cell_run"].glob("units/*/llm_calls.parquet")))
    n_cells = runs["table"].n_cells
    assert 100 < n_cells < 240
    assert len(calls) == n_cells * len(runs["spec"].questions) and not calls["cached"].any()
    assert (calls["status"] == "ok").all()
    asked = pd.read_parquet(runs["cell_run"] / "personas.parquet")
    assert sorted(asked["persona_id"]) == sorted(runs["table"].cells["cell_id"])
    counts = pd.read_parquet(runs["cell_run"] / "cells.parquet")
    assert int(counts["population"].sum()) == 2000 == int(asked["population"].sum())
    # the per-persona run asked every persona, and its prompts are exactly the cell run's prompts
    assert len(runs["per_persona"]["llm_calls"]) == 2000 * len(runs["spec"].questions)
    cell_prompts = pd.read_parquet(next(runs["cell_run"].glob("units/*/responses.parquet")))["prompt_sha256"]
    assert set(runs["per_persona"]["responses"]["prompt_sha256"]) == set(cell_prompts)


def test_every_persona_gets_its_cells_distribution(runs):
    cell = _distributions(pd.read_parquet(next(runs["cell_run"].glob("units/*/responses.parquet"))))
    cell = cell.rename(columns={"persona_id": "cell_id"})
    persona = _distributions(runs["per_persona"]["responses"]).merge(runs["persona_cells"], on="persona_id")
    joined = persona.merge(cell, on=["cell_id", "question", "option"], suffixes=("_persona", "_cell"))
    assert len(joined) == len(persona) == 2000 * 2 * 5
    assert np.abs(joined["probability_persona"] - joined["probability_cell"]).max() <= 1e-12
    # not a constant: the distributions differ between cells
    assert cell.groupby(["question", "option"])["probability"].std().min() > 0.01


def test_post_stratified_estimates_equal_the_personas_mean(runs):
    cell = _distributions(pd.read_parquet(next(runs["cell_run"].glob("units/*/responses.parquet"))))
    counts = pd.read_parquet(runs["cell_run"] / "cells.parquet")
    cells = counts.drop_duplicates("cell_id")[["cell_id", *CELL_ATTRIBUTES]]
    estimates = population_estimates(cell.rename(columns={"persona_id": "cell_id"}),
                                     counts[["cell_id", "geography", "population"]].rename(
                                         columns={"population": "count"}), cells, groups=["party"])
    persona = _distributions(runs["per_persona"]["responses"])
    attributes = runs["population"].set_index("persona_id")[["state", "party"]].astype(str)
    persona = persona.join(attributes, on="persona_id")
    direct = pd.concat(
        [
            persona.groupby(["question", "option"])["probability"]
            .mean()
            .rename("direct")
            .reset_index()
            .assign(domain="all"),
            persona.groupby(["question", "state", "option"])["probability"]
            .mean()
            .rename("direct")
            .reset_index()
            .rename(columns={"state": "domain"}),
            persona.groupby(["question", "party", "option"])["probability"]
            .mean()
            .rename("direct")
            .reset_index()
            .assign(domain=lambda f: "party=" + f["party"])
            .drop(columns="party"),
        ]
    )
    joined = estimates.merge(direct, on=["question", "domain", "option"])
    assert len(joined) == len(estimates) and set(joined["level"]) == {"national", "geography", "group"}
    assert joined["domain"].nunique() == 1 + runs["population"]["state"].nunique() + 4
    assert np.abs(joined["estimate"] - joined["direct"]).max() <= 1e-12
    assert (joined["interval"] == "exact").all()
