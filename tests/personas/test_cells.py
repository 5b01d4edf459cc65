"""Population cells and cell cards: counts against pandas' own grouping, stable ids, one prompt per cell, bad input."""
from __future__ import annotations

import io
import string

import numpy as np
import pandas as pd
import pytest

from pvsst.core.errors import InputError
from pvsst.personas.cards import check_template
from pvsst.personas.cell_cards import CELL_FIELDS, cell_cards, load_cell_template, persona_cell_cards, render_cell_card
from pvsst.personas.cells import cell_id_of, cell_table
from pvsst.personas.synthesis import synthesize

ATTRIBUTES = ["age_band", "sex", "party", "region"]


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    return synthesize(5_000, geography="US", seed=7).personas


def test_cell_counts_equal_pandas_grouping(people):
    table = cell_table(people, ATTRIBUTES)
    expected = people.groupby(ATTRIBUTES, observed=True).size()
    got = table.cells.set_index(ATTRIBUTES)["count"]
    assert len(got) == len(expected) == table.n_cells
    assert (got.reindex(expected.index) == expected).all()
    by_state = people.groupby(ATTRIBUTES + ["state"], observed=True).size()
    joined = table.counts.merge(table.cells[["cell_id"] + ATTRIBUTES], on="cell_id")
    assert (joined.set_index(ATTRIBUTES + ["state"])["count"].reindex(by_state.index) == by_state).all()
    assert int(table.counts["count"].sum()) == len(people) == int(table.cells["count"].sum())
    # every persona sits in the cell whose attributes it has
    merged = table.persona_cell.assign(cell_id=table.persona_cell["cell_id"].astype(str)).merge(
        table.cells[["cell_id"] + ATTRIBUTES].rename(columns=lambda c: c if c == "cell_id" else f"cell_{c}"),
        on="cell_id")
    merged = merged.set_index("persona_id").reindex(people["persona_id"])
    for attribute in ATTRIBUTES:
        assert (merged[f"cell_{attribute}"].astype(str).to_numpy() == people[attribute].astype(str).to_numpy()).all()
    # cells in attribute order: the categories' own order
    first = table.cells.iloc[0]
    assert (first["age_band"], first["sex"]) == ("18-19", "male")


def test_count_matrix_is_the_wide_form_of_the_counts(people):
    table = cell_table(people, ["sex", "region"])
    matrix = table.count_matrix()
    assert matrix.shape == (table.n_cells, people["state"].nunique())
    assert int(matrix.to_numpy().sum()) == len(people)
    assert (
        int(matrix.loc[table.cells["cell_id"][0], "CA"])
        == int(((people["sex"] == "male") & (people["region"] == "Northeast") & (people["state"] == "CA")).sum())
        == 0
    )


def test_cell_ids_depend_only_on_the_cell(people):
    other = synthesize(300, geography="OH", seed=99).personas
    ids_a = cell_table(people, ["sex", "region"]).cells.set_index(["sex", "region"])["cell_id"]
    ids_b = cell_table(other, ["sex", "region"]).cells.set_index(["sex", "region"])["cell_id"]
    assert ids_b.loc[("female", "Midwest")] == ids_a.loc[("female", "Midwest")] == cell_id_of(
        {"sex": "female", "region": "Midwest"})
    # a table read back from CSV (strings, no categories) gives the same ids
    text = people[["persona_id", "sex", "region", "state"]].to_csv(index=False)
    again = cell_table(pd.read_csv(io.StringIO(text)), ["sex", "region"]).cells.set_index(["sex", "region"])["cell_id"]
    assert again.to_dict() == ids_a.to_dict() and len(again) == 8


def test_weighted_counts_are_weight_sums():
    frame = pd.DataFrame({"persona_id": ["a", "b", "c", "d"], "sex": ["f", "f", "m", "f"],
                          "state": ["OH", "TX", "OH", "OH"], "w": [0.5, 2.0, 1.5, 0.25]})
    table = cell_table(frame, ["sex"], weight="w")
    assert table.cells["count"].tolist() == [2.75, 1.5]
    assert table.counts[["state", "count"]].values.tolist() == [["OH", 0.75], ["TX", 2.0], ["OH", 1.5]]


@pytest.mark.parametrize("kwargs, message", [
    ({"attributes": ["sex", "partyy"]}, "personas: cells: unknown cell attribute 'partyy' (columns: "),
    ({"attributes": ["sex", "sex"]}, "personas: cells: cell attribute 'sex' listed twice"),
    ({"attributes": []}, "personas: cells: no cell attribute given"),
    ({"attributes": ["sex"], "geography": "county"}, "personas: geography: no column 'county' in the persona table"),
    ({"attributes": ["sex"], "weight": "w"}, "personas: weight: no column 'w' in the persona table"),
])
def test_bad_cell_definitions_are_one_line_input_errors(people, kwargs, message):
    with pytest.raises(InputError) as caught:
        cell_table(people, **kwargs)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_a_persona_without_a_cell_value_is_an_input_error():
    frame = pd.DataFrame({"persona_id": ["a", "b"], "sex": ["f", None], "state": ["OH", "OH"]})
    with pytest.raises(InputError, match=r"^personas: sex: 1 persona\(s\) have no value for this cell attribute$"):
        cell_table(frame, ["sex"])


def test_personas_of_a_cell_share_one_card_that_prints_only_cell_attributes(people):
    table = cell_table(people, ATTRIBUTES)
    cards = persona_cell_cards(table)
    assert cards["card"].nunique() == table.n_cells
    per_cell = cards.groupby("cell_id", observed=True)["card"].nunique()
    assert (per_cell == 1).all()
    # changing attributes outside the cell (income, education, state) changes no card
    changed = people.assign(income=0, education="advanced_degree", state="WY")
    assert persona_cell_cards(cell_table(changed, ATTRIBUTES))["card"].equals(cards["card"])
    card = render_cell_card({"age_band": "85+", "sex": "female", "party": "Republican", "region": "South"}, ATTRIBUTES)
    assert card == ("A U.S. adult with these characteristics: aged 85 or older; a woman; party: Republican; "
                    "living in the South (Census region).")
    style = cell_cards(table)["card_style"].unique().tolist()
    assert style == ["cell_v1"]


def test_cell_template_is_checked_and_versioned():
    style, template = load_cell_template()
    assert style == "cell_v1" and set(template.get_identifiers()) == CELL_FIELDS
    with pytest.raises(InputError, match="missing .not provided.: age"):
        check_template(string.Template("${traits} ${age}"), "cell_v1", CELL_FIELDS)
    with pytest.raises(InputError, match="unknown cell card version 9"):
        load_cell_template(9)


def test_cell_table_is_deterministic_and_matches_numpy_unique(people):
    one, two = cell_table(people, ATTRIBUTES), cell_table(people, ATTRIBUTES)
    assert one.cells.equals(two.cells) and one.counts.equals(two.counts)
    codes = np.stack([people[a].cat.codes.to_numpy() for a in ATTRIBUTES], axis=1)
    assert len(np.unique(codes, axis=0)) == one.n_cells
