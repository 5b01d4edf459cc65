"""Cell runs: malformed cell definitions are refused with one line, sampled draws per cell, free reruns, unit answers.

The instrument builder (``survey_helpers.cell_spec``) asks census personas of the CCES racial-attitudes
instrument cell by cell (sex x race / ethnicity x education x party).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from cli_checks import refused
from survey_helpers import CCES, cell_spec, write

from pvsst.core.errors import InputError
from pvsst.experiments.cli import main
from pvsst.experiments.spec.lock import lock_path
from pvsst.experiments.survey.cell_population import asked_cells, unit_answers
from pvsst.personas.synthesis import synthesize
from pvsst.sim.llm.providers.registry import register_scripted_provider


@pytest.fixture(scope="module", autouse=True)
def _provider():
    register_scripted_provider("prompt_logprobs", "prompt_logprobs_provider:PromptLogprobsProvider")


def _respondent_personas() -> dict:
    personas = yaml.safe_load(open(CCES))["personas"]
    del personas["attributes"]["party_id"]
    return dict(personas, source="respondents", n=50)


MALFORMED = [
    ({"cells": {"attributes": ["sex", "partyy"]}},
     "cells.attributes[1]: unknown cell attribute 'partyy' (persona attributes: age_band, "),
    ({"cells": {"attributes": ["sex", "race_ethnicity", "education", "party"]}, "personas": _respondent_personas()},
     "cells.attributes[3]: the population (respondent-matched personas) lacks cell attribute 'party': map "
     "party_id in personas.attributes"),
    ({"cells": {"attributes": ["sex", "race_ethnicity", "education", "party"], "k": 0}},
     "cells.k: Input should be greater than or equal to 1"),
    ({"cells": {"attributes": ["sex", "race_ethnicity", "education", "party"], "card_style": "cell_v9"}},
     "cells.card_style: unknown cell card version 9; available: cell_v1"),
    ({"cells": {"attributes": ["sex", "race_ethnicity", "party"]}},
     "grouping[3].persona_column: 'education' is not a cell attribute; in a cell run a group is read from the cell"),
    ({"cells": {"attributes": ["sex", "race_ethnicity", "education", "party"]}, "sampling": {"samples_per_persona": 2}},
     "sampling.samples_per_persona: a cell run draws cells.k answers per cell x question"),
]


@pytest.mark.parametrize("change, message", MALFORMED, ids=lambda v: str(v)[:40])
def test_malformed_cell_definitions_exit_2_with_one_line_and_write_nothing(tmp_path, capsys, change, message):
    spec = cell_spec(**change)
    path = write(tmp_path, spec, frozen=False)
    err = refused(capsys, ["prereg", "freeze", str(path)])
    assert err.startswith(f"pvsst: error: {path}: {message}"), err
    assert not lock_path(path).exists()
    out = tmp_path / "run"
    err = refused(capsys, ["survey", "run", str(path), "--out", str(out), "--deviation", "test"])
    assert err.startswith(f"pvsst: error: {path}: {message}"), err
    assert not out.exists()


def test_a_geography_column_the_data_lacks_exits_2_and_writes_nothing(tmp_path, capsys):
    spec = cell_spec()
    spec["data"]["geography"] = "statex"
    path = write(tmp_path, spec, frozen=False)
    expected = "pvsst: error: stevedata/TV16: data.geography: no column 'statex' in stevedata/TV16 (columns: "
    assert refused(capsys, ["prereg", "freeze", str(path)]).startswith(expected)
    assert not lock_path(path).exists()
    out = tmp_path / "run"
    err = refused(capsys, ["survey", "run", str(path), "--out", str(out), "--deviation", "test"])
    assert err.startswith(expected) and not out.exists()


@pytest.mark.parametrize("data, message", [
    ({"state_predictors": ["dem_share_2016"]},
     "data.state_predictors: no state-level predictor 'dem_share_2016' (known: dem_share_2012)"),
    ({"state_predictors": ["dem_share_2012"], "geography": None},
     "data.state_predictors: state-level predictors need data.geography"),
    ({"state_predictors": ["dem_share_2012", "dem_share_2012"], "geography": "state"},
     "data.state_predictors: 'dem_share_2012' named twice"),
])
def test_a_state_predictor_that_is_unknown_repeated_or_without_a_geography_is_refused(tmp_path, capsys, data,
                                                                                       message):
    spec = cell_spec()
    spec["data"].update(data)
    path = write(tmp_path, spec, frozen=False)
    err = refused(capsys, ["prereg", "freeze", str(path)])
    assert err.startswith(f"pvsst: error: {path}: {message}"), err
    assert not lock_path(path).exists()


def test_sampled_answers_make_k_seeded_draws_per_cell_and_question(tmp_path):
    spec = cell_spec(model="scripted/echo", conditions=["persona_label"], n=300, questions=1)
    spec["cells"]["k"] = 3
    out = tmp_path / "run"
    assert main(["survey", "run", str(write(tmp_path, spec)), "--out", str(out)]) == 0
    responses = pd.read_parquet(next(out.glob("units/*/responses.parquet")))
    cells = pd.read_parquet(out / "personas.parquet")
    assert len(responses) == 3 * len(cells) and set(responses["persona_id"]) == set(cells["cell_id"])
    assert (responses.groupby("persona_id")["sample"].apply(lambda s: tuple(sorted(s))) == (0, 1, 2)).all()
    assert responses["request_seed"].nunique() == len(responses)
    assert responses["parse_ok"].all()
    # the card is the cell's: it names the cell attributes and nothing else
    card = cells.set_index("cell_id")["card_label"].iloc[0]
    assert card.startswith("A U.S. adult with these characteristics: ") and "aged" not in card


def test_a_second_run_on_the_same_cache_makes_no_model_call(tmp_path):
    from prompt_logprobs_provider import PromptLogprobsProvider

    path = write(tmp_path, cell_spec(n=500))
    first, second = tmp_path / "first", tmp_path / "second"
    before = PromptLogprobsProvider.calls
    assert main(["survey", "run", str(path), "--out", str(first)]) == 0
    n_calls = PromptLogprobsProvider.calls - before
    n_cells = len(pd.read_parquet(first / "personas.parquet"))
    assert n_calls == 2 * n_cells > 0
    second.mkdir()
    for part in first.glob("cache.sqlite*"):  # the database and its write-ahead log
        (second / part.name).write_bytes(part.read_bytes())
    assert main(["survey", "run", str(path), "--out", str(second)]) == 0
    assert PromptLogprobsProvider.calls - before == n_calls
    calls = pd.read_parquet(next(second.glob("units/*/llm_calls.parquet")))
    assert len(calls) == n_calls and calls["cached"].all()
    assert pd.read_parquet(first / "cells.parquet").equals(pd.read_parquet(second / "cells.parquet"))


def test_cell_counts_partition_the_population_by_state():
    people = synthesize(3000, geography="CA,TX,OH", seed=5).personas
    asked, counts = asked_cells(people, ["sex", "party"])
    assert list(counts.columns) == ["cell_id", "sex", "party", "geography", "population"]
    direct = people.groupby(["sex", "party", "state"], observed=True).size()
    got = counts.set_index(["sex", "party", "geography"])["population"]
    assert got.sort_index().to_dict() == {tuple(map(str, k)): int(v) for k, v in direct.sort_index().items()}
    assert asked["population"].sum() == 3000 and (asked["weight"] == asked["population"]).all()
    assert asked["persona_id"].equals(asked["cell_id"])


def test_a_population_without_a_state_is_counted_as_us():
    people = pd.DataFrame({"persona_id": ["a", "b", "c"], "sex": ["male", "male", "female"]})
    _, counts = asked_cells(people, ["sex"])
    assert counts[["sex", "geography", "population"]].values.tolist() == [["female", "US", 1], ["male", "US", 2]]
    with pytest.raises(InputError, match="lacks cell attribute 'party'"):
        asked_cells(people, ["party"])


def test_unit_answers_are_seeded_draws_from_each_cells_distribution():
    p = pd.DataFrame({"yes": [0.2, 0.9, 0.5], "no": [0.8, 0.1, 0.5]}, index=["a", "b", "c"])
    cells = np.repeat(["a", "b", "c"], [20_000, 20_000, 10])
    answers = unit_answers(cells, p, seed=7, label="m|q")
    again = unit_answers(cells, p, seed=7, label="m|q")
    other = unit_answers(cells, p, seed=7, label="m|q2")
    assert (answers == again).all() and not (answers == other).all()
    for cell, share in (("a", 0.2), ("b", 0.9)):
        drawn = (answers[cells == cell] == "yes").mean()
        assert abs(drawn - share) < 4 * np.sqrt(share * (1 - share) / 20_000)  # four standard errors
    point = unit_answers(["a", "a"], pd.DataFrame({"yes": [1.0], "no": [0.0]}, index=["a"]), seed=1)
    assert point.tolist() == ["yes", "yes"]
    with pytest.raises(InputError, match="cell 'z' has personas but no distribution"):
        unit_answers(["z"], p, seed=1)
    with pytest.raises(InputError, match="must sum to 1"):
        unit_answers(["a"], p * 2, seed=1)
