"""Coverage of estimates.csv's intervals on a planted population with known cell shares: 500 simulated
runs of k sampled answers per cell (k = 1 and 5) and of logprobs (the cells' distributions read exactly).

The truth is sum_c N_dc / N_d p_c for every domain (nation, two states, two groups). A sampled run draws
each cell's k answers from p_c; its 95% Wilson intervals (population_estimates) must cover the truth in
93-97% of runs. Resampling a cell from its own estimate (the interval this replaces) gives zero width at
k = 1: it covers the truth in none of these runs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pvsst.analysis.survey.cells.poststratification import (
    domain_counts,
    effective_answers,
    population_estimates,
    poststratify,
    sampled_variance,
    wilson_interval,
)

RUNS = 500
CELLS = 120


@pytest.fixture(scope="module")
def planted():
    rng = np.random.default_rng(38)
    cells = pd.DataFrame({"cell_id": [f"c{i}" for i in range(CELLS)],
                          "sex": np.where(np.arange(CELLS) % 2, "female", "male")})
    counts = pd.DataFrame({"cell_id": cells["cell_id"], "state": np.where(np.arange(CELLS) < 60, "OH", "TX"),
                           "count": rng.integers(50, 2000, size=CELLS)})
    p = rng.beta(8, 12, size=CELLS)
    labels, matrix = domain_counts(counts, cells, list(cells["cell_id"]), ["sex"])
    truth = poststratify(matrix, np.c_[p, 1 - p])[:, 0]
    return cells, counts, p, labels, matrix, truth


def _answers(cells, yes, k):
    return pd.DataFrame({"cell_id": np.repeat(cells["cell_id"], 2), "question": "q", "option": ["yes", "no"] * CELLS,
                         "count": np.c_[yes, k - yes].ravel()})


@pytest.mark.parametrize("k", [1, 5])
def test_sampled_intervals_cover_the_planted_share_in_93_to_97_percent_of_runs(planted, k):
    cells, counts, p, labels, matrix, truth = planted
    rng = np.random.default_rng(1000 + k)
    yes = rng.binomial(k, p, size=(RUNS, CELLS))
    covered = np.zeros((RUNS, len(truth)), dtype=bool)
    for run in range(RUNS):
        answers = np.c_[yes[run], k - yes[run]]
        estimate = poststratify(matrix, answers / k)
        low, high = wilson_interval(estimate, effective_answers(matrix, answers, estimate,
                                                                sampled_variance(matrix, answers)))
        covered[run] = (low[:, 0] <= truth) & (truth <= high[:, 0])
    coverage = covered.mean(axis=0)
    print(f"k = {k}: coverage by domain {dict(zip(labels['domain'], coverage.round(3)))}")
    assert ((0.93 <= coverage) & (coverage <= 0.97)).all(), coverage
    # the table population_estimates writes carries the same interval, labelled for what it is
    table = population_estimates(_answers(cells, yes[0], k), counts, cells, groups=["sex"])
    row = table[table["option"] == "yes"].iloc[0]
    answers = np.c_[yes[0], k - yes[0]]
    estimate = poststratify(matrix, answers / k)
    low, high = wilson_interval(
        estimate, effective_answers(matrix, answers, estimate, sampled_variance(matrix, answers))
    )
    assert row["interval"] == "wilson" and row["cell_draws"] == k
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low[0, 0], high[0, 0]), abs=1e-15)
    assert 0.02 < row["ci_high"] - row["ci_low"] < 0.25


def test_one_draw_per_cell_never_gives_a_zero_width_interval(planted):
    cells, counts, p, *_ = planted
    yes = np.random.default_rng(7).binomial(1, p)
    table = population_estimates(_answers(cells, yes, 1), counts, cells, groups=["sex"])
    assert (table["ci_high"] - table["ci_low"] > 0.02).all()


def test_logprobs_are_read_not_sampled_so_the_exact_interval_is_the_truth(planted):
    """Coverage 1 by construction: a logprobs run reads each cell's distribution, there is no draw to vary."""
    cells, counts, p, labels, _, truth = planted
    answers = pd.DataFrame({"cell_id": np.repeat(cells["cell_id"], 2), "question": "q",
                            "option": ["yes", "no"] * CELLS, "probability": np.c_[p, 1 - p].ravel()})
    table = population_estimates(answers, counts, cells, groups=["sex"])
    yes = table[table["option"] == "yes"]
    assert (yes["interval"] == "exact").all() and (yes["ci_low"] == yes["ci_high"]).all()
    assert np.abs(yes["estimate"].to_numpy() - truth).max() < 1e-12
