"""The logistic decomposition detects a planted income effect and gives nothing to factors without one."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import xlogy

from pvsst.analysis.figures.decomposition import decomposition_figure
from pvsst.analysis.scenarios.decomposition import TOTAL, decompose
from pvsst.core.errors import InputError

FACTORS = ["income", "education", "sex", "framing"]
INCOME = pd.CategoricalDtype(["under $70,000", "$70,000 or more"], ordered=True)


def planted_draws(p_of, seed: int, per_cell: int = 40) -> pd.DataFrame:
    """Per-draw rows of a scripted respondent: every design cell asked ``per_cell`` times."""
    grid = pd.MultiIndex.from_product(
        [INCOME.categories, ["high school or less", "some college", "bachelor's or more"], ["female", "male"],
         ["loss", "prosocial", "statistical"]], names=FACTORS).to_frame(index=False)
    rows = grid.loc[grid.index.repeat(per_cell)].reset_index(drop=True).astype({"income": INCOME})
    rows["yes"] = (np.random.default_rng(seed).random(len(rows)) < p_of(rows)).astype(int)
    return rows


def bernoulli_entropy(p: float) -> float:
    return float(-(xlogy(p, p) + xlogy(1 - p, 1 - p)))


def test_income_only_respondent_gives_income_at_least_95_percent():
    draws = planted_draws(lambda r: np.where(r["income"] == "$70,000 or more", 0.75, 0.25), seed=1)
    result = decompose(draws, FACTORS, method="shapley", bootstrap_draws=60, seed=3)
    shares = result.shares.set_index("factor")
    assert shares.loc["income", "share"] >= 0.95 and shares.loc["income", "share_low"] >= 0.95
    # The planted population value of McFadden's R2: 1 - H(0.25) / H(0.5), all of it income's.
    truth = 1 - bernoulli_entropy(0.25) / bernoulli_entropy(0.5)
    assert shares.loc["income", "contribution_low"] <= truth <= shares.loc["income", "contribution_high"]
    for factor in ("education", "sex", "framing"):
        assert shares.loc[factor, "contribution_low"] <= 0 <= shares.loc[factor, "contribution_high"], factor
    assert abs(shares["contribution"][FACTORS].sum() - shares.loc[TOTAL, "contribution"]) < 1e-9   # Shapley adds up
    effect = result.effects.set_index(["factor", "level"]).loc[("income", "$70,000 or more")]
    assert effect["reference"] == "under $70,000" and effect["ame_low"] <= 0.5 <= effect["ame_high"]
    assert result.design_cells == 36 and result.draws == 1440 and "basic bootstrap" in result.interval


def test_respondent_ignoring_every_factor_explains_nothing():
    draws = planted_draws(lambda r: np.full(len(r), 0.5), seed=2)
    result = decompose(draws, FACTORS, method="drop_one", bootstrap_draws=60, seed=4)
    shares = result.shares.set_index("factor")
    assert shares.loc[TOTAL, "contribution"] < 0.005 and shares.loc[TOTAL, "p_value"] > 0.05
    for factor in (*FACTORS, TOTAL):
        assert shares.loc[factor, "contribution_low"] <= 0 <= shares.loc[factor, "contribution_high"], factor
    for factor in FACTORS:
        assert shares.loc[factor, "p_value"] > 0.01, factor
    assert (result.effects["ame_low"] <= 0).all() and (result.effects["ame_high"] >= 0).all()
    figure = decomposition_figure(result.shares, result.effects)
    assert figure.name == "decomposition" and len(figure.data) == len(FACTORS) + len(result.effects)
    figure.close()


def test_exact_distributions_and_weights_and_bad_tables():
    cells = planted_draws(lambda r: np.full(len(r), 0.5), seed=1, per_cell=1).drop(columns="yes")
    cells["yes"] = np.where(cells["income"] == "$70,000 or more", 0.7, 0.3)
    exact = decompose(cells, FACTORS, bootstrap_draws=50)
    shares = exact.shares.set_index("factor")
    assert abs(shares.loc["income", "share"] - 1) < 1e-6 and exact.bootstrap_draws == 0
    assert np.isnan(shares.loc["income", "contribution_low"]) and "exact distributions" in exact.interval
    weighted = decompose(cells.assign(weight=np.where(cells["sex"] == "male", 3.0, 1.0)), FACTORS, bootstrap_draws=0)
    assert abs(weighted.shares.set_index("factor").loc["income", "share"] - 1) < 1e-6
    with pytest.raises(InputError, match="yes: every yes share"):
        decompose(cells.assign(yes=1.5), FACTORS)
    with pytest.raises(InputError, match="framingg: missing column"):
        decompose(cells, ["income", "framingg"])
    with pytest.raises(InputError, match="at least two levels"):
        decompose(cells[cells["sex"] == "male"], FACTORS)
    with pytest.raises(InputError, match="different weights"):
        decompose(pd.concat([cells.assign(weight=1.0), cells.assign(weight=2.0)]), FACTORS)
