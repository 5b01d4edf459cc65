"""Post-stratified estimates: a hand computation in exact fractions, per-persona vs per-cell exactness,
the interval from the cells' draws, and bad input."""
from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from pvsst.analysis.survey.cells.poststratification import (
    ESTIMATE_COLUMNS,
    population_estimates,
    poststratify,
    sampled_variance,
)
from pvsst.core.errors import InputError
from pvsst.personas.cells import cell_table
from pvsst.personas.synthesis import synthesize

# Three cells (sex x party), two states. Population counts N_gc and cell distributions p_c (yes, no).
CELLS = pd.DataFrame({"cell_id": ["fD", "fR", "mR"], "sex": ["f", "f", "m"], "party": ["D", "R", "R"]})
COUNTS = pd.DataFrame({"cell_id": ["fD", "fR", "mR", "fD", "mR"], "state": ["OH", "OH", "OH", "TX", "TX"],
                       "count": [3, 5, 2, 1, 6]})
P_YES = {"fD": F(9, 10), "fR": F(1, 4), "mR": F(1, 5)}


def _answers(kind="probability"):
    rows = []
    for cell, yes in P_YES.items():
        rows += [(cell, "q", "yes", float(yes)), (cell, "q", "no", float(1 - yes))]
    return pd.DataFrame(rows, columns=["cell_id", "question", "option", kind])


def _hand(counts: dict[str, int]) -> F:
    total = sum(counts.values())
    return sum(F(n, total) * P_YES[c] for c, n in counts.items())


def test_estimates_equal_a_hand_computation_in_exact_fractions():
    table = population_estimates(_answers(), COUNTS, CELLS, groups=["sex", "party"])
    yes = table[table["option"] == "yes"].set_index("domain")["estimate"]
    expected = {
        "all": _hand({"fD": 4, "fR": 5, "mR": 8}),        # 3.6/17 + 1.25/17 + 1.6/17 = 6.45/17
        "OH": _hand({"fD": 3, "fR": 5, "mR": 2}),         # (2.7 + 1.25 + 0.4) / 10 = 0.435
        "TX": _hand({"fD": 1, "mR": 6}),                  # (0.9 + 1.2) / 7 = 0.3
        "sex=f": _hand({"fD": 4, "fR": 5}), "sex=m": _hand({"mR": 8}),
        "party=D": _hand({"fD": 4}), "party=R": _hand({"fR": 5, "mR": 8}),
    }
    assert expected["OH"] == F(87, 200) and expected["TX"] == F(3, 10) and expected["all"] == F(129, 340)
    for domain, value in expected.items():
        assert abs(yes[domain] - float(value)) < 1e-15, domain
    assert (table["interval"] == "exact").all() and (table["ci_low"] == table["estimate"]).all()
    assert list(table.columns) == list(ESTIMATE_COLUMNS)
    population = table.drop_duplicates("domain").set_index("domain")["population"]
    assert population.to_dict() == {"all": 17, "OH": 10, "TX": 7, "sex=f": 9, "sex=m": 8, "party=D": 4, "party=R": 13}
    assert table.set_index(["domain", "option"])["n_cells"][("TX", "yes")] == 2
    # options sum to one in every domain
    assert np.allclose(table.groupby("domain")["estimate"].sum(), 1.0, atol=1e-15)


def test_poststratify_is_the_count_weighted_mean():
    counts = np.array([[3, 5, 2], [1, 0, 6]])
    p = np.array([[0.9, 0.1], [0.25, 0.75], [0.2, 0.8]])
    assert np.allclose(poststratify(counts, p)[:, 0], [0.435, 0.3], atol=1e-15)
    assert np.isnan(poststratify(np.zeros((1, 3)), p)).all()


def test_per_persona_and_per_cell_answers_give_the_same_estimates():
    people = synthesize(2_000, geography="US", seed=11).personas
    attributes = ["age_band", "sex", "party"]
    cells = cell_table(people, attributes)
    rng = np.random.default_rng(5)
    options = ["a", "b", "c"]
    p = rng.dirichlet(np.ones(3), size=cells.n_cells)
    by_cell = pd.DataFrame({"cell_id": np.repeat(cells.cells["cell_id"], 3), "question": "q",
                            "option": np.tile(options, cells.n_cells), "probability": p.ravel()})
    # the per-persona expansion: every persona carries its cell's distribution, each persona its own cell
    persona_cells = cell_table(people, ["persona_id"] + attributes)
    position = dict(zip(cells.cells["cell_id"], range(cells.n_cells)))
    cell_of = cells.persona_cell.set_index("persona_id")["cell_id"].astype(str)
    member = persona_cells.cells["persona_id"].map(cell_of).map(position).to_numpy()
    by_persona = pd.DataFrame({"cell_id": np.repeat(persona_cells.cells["cell_id"], 3), "question": "q",
                               "option": np.tile(options, len(people)), "probability": p[member].ravel()})
    a = population_estimates(by_cell, cells.counts, cells.cells, groups=["sex", "party"])
    b = population_estimates(by_persona, persona_cells.counts, persona_cells.cells, groups=["sex", "party"])
    assert persona_cells.n_cells == len(people) and cells.n_cells < 300
    assert a[["level", "domain", "option"]].equals(b[["level", "domain", "option"]])
    assert np.abs(a["estimate"] - b["estimate"]).max() < 1e-12
    assert (a["population"] == b["population"]).all()
    # and both equal the plain mean of the personas' distributions per state
    mean = pd.DataFrame(p[member], columns=options).groupby(
        persona_cells.cells["state"] if "state" in persona_cells.cells else
        people.set_index("persona_id").loc[persona_cells.cells["persona_id"], "state"].astype(str).to_numpy()).mean()
    states = a[a["level"] == "geography"].pivot(index="domain", columns="option", values="estimate")
    assert np.abs(states.loc[mean.index, options].to_numpy() - mean.to_numpy()).max() < 1e-12


def test_sampled_answers_get_wilson_intervals_from_the_variance_of_each_cells_draws():
    answers = _answers("count")
    answers["count"] = [18, 2, 5, 15, 4, 16]   # k = 20 draws per cell: shares 0.9, 0.25, 0.2 as above
    table = population_estimates(answers, COUNTS, CELLS)
    row = table[(table["domain"] == "OH") & (table["option"] == "yes")].iloc[0]
    assert abs(row["estimate"] - 0.435) < 1e-15 and row["interval"] == "wilson"
    assert row["ci_low"] < 0.435 < row["ci_high"] and row["cell_draws"] == 20 and row["ci_level"] == 0.95
    # the variance of a post-stratified share: sum_c (N_c/N)^2 p_c (1 - p_c) / (k - 1), unbiased for each cell
    expected = sum((n / 10) ** 2 * p * (1 - p) / 19 for n, p in ((3, 0.9), (5, 0.25), (2, 0.2)))
    variance = sampled_variance(np.array([[3, 5, 2]]), np.array([[18, 2], [5, 15], [4, 16]]))[0, 0]
    assert abs(variance - expected) < 1e-15
    assert abs(row["effective_n"] - 0.435 * 0.565 / expected) < 1e-9
    # its Wilson interval by hand (z = 1.959964)
    z, n = 1.959963984540054, 0.435 * 0.565 / expected
    centre = (0.435 + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(0.435 * 0.565 / n + z * z / (4 * n * n))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((centre - half, centre + half), abs=1e-12)


def test_keys_pass_through_and_are_estimated_separately():
    answers = pd.concat([_answers().assign(model="m1"), _answers().assign(model="m2")], ignore_index=True)
    answers.loc[answers["model"] == "m2", "probability"] = 0.5
    table = population_estimates(answers, COUNTS, CELLS)
    yes = table[(table["domain"] == "OH") & (table["option"] == "yes")].set_index("model")["estimate"]
    assert list(table.columns[:2]) == ["model", "question"]
    assert abs(yes["m1"] - 0.435) < 1e-15 and abs(yes["m2"] - 0.5) < 1e-15


@pytest.mark.parametrize("change, message", [
    (lambda a, c: (a[a["cell_id"] != "mR"], c), "answers: cell_id: cell 'mR' has population but no answers"),
    (lambda a, c: (a.drop(columns="probability"), c), "answers: count: need exactly one of the columns count"),
    (lambda a, c: (a.assign(probability=-1.0), c), "answers: probability: must hold non-negative numbers"),
    (lambda a, c: (a, c.assign(cell_id="zz")), "cell counts: cell_id: cell 'zz' has population but no answers"),
])
def test_malformed_inputs_are_one_line_input_errors(change, message):
    answers, counts = change(_answers(), COUNTS)
    with pytest.raises(InputError) as caught:
        population_estimates(answers, counts, CELLS)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_a_group_that_is_not_a_cell_attribute_is_refused():
    with pytest.raises(InputError, match=r"^estimates: groups: 'education' is not a cell attribute"):
        population_estimates(_answers(), COUNTS, CELLS, groups=["education"])
