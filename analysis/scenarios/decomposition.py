"""How much of the variation in a yes / no decision each factor explains: a logistic decomposition.

The input is a *decision table* (one question): one row per cell x scenario x model (with the share of
yes and the number of draws behind it), or one row per draw. Columns:

- one column per factor (demographic attributes, geography, model, each scenario factor), categorical;
  the first level (category order, else sorted) is the reference of its effects;
- ``yes``: the share of yes answers of the row, in [0, 1] (0 or 1 for a per-draw row, a probability for
  a distribution elicited by log-probabilities or verbalized);
- ``n`` (optional): the number of sampled answers behind ``yes``; without it every row is one draw,
  or, when some ``yes`` is strictly between 0 and 1, an exact distribution with no sampling error;
- ``weight`` (optional): the row's population weight (e.g. the cell's population); it must be the same
  for every row of a design cell (one combination of all factors). Without it every draw counts once.

Rows are pooled into design cells. The model is a binomial GLM with logit link and every factor's
main effects (treatment coding; ``statsmodels``), fitted to the cells' yes-shares with variance
weights ``v = n x weight`` (weights scaled to mean 1). ``D(S) = -2 sum_c v_c [y_c log p_c + (1 - y_c)
log(1 - p_c)]`` is the deviance of the individual answers under the model with the factors in ``S``
(fitted P(yes) ``p_c``, observed share ``y_c``); ``D_0`` is that of the intercept-only model. McFadden's
R-squared ``R2(S) = 1 - D(S) / D_0`` (McFadden 1974; the deviance R-squared of Cameron & Windmeijer
1997, J. Econometrics 77:329-342, for individual answers) is the share of the variation in the
decision the factors explain; it is split over factors:

- ``method="shapley"``: the Shapley value of each factor in the game ``R2``, ``phi_f = sum over S not
  containing f of |S|! (K - |S| - 1)! / K! x (R2(S + f) - R2(S))`` (Huettner & Sunder 2012, Electronic
  Journal of Statistics 6:1239-1250). The values add up to ``R2(all)``, whatever the correlation
  between factors. It fits 2^K models, so it suits K up to about 8.
- ``method="drop_one"``: ``(D(all - f) - D(all)) / D_0``, the deviance explained by f beyond the other
  factors; with correlated factors these do not add up to ``R2(all)``. It fits K + 2 models.

``share`` is a factor's contribution over the sum of contributions. Each factor also gets its
likelihood-ratio test of no effect, ``D(all - f) - D(all)`` against chi-square with the factor's degrees
of freedom, valid for sampled answers without population weights (NaN otherwise). Average marginal
effects: for each non-reference level, the weighted mean over design cells of the predicted P(yes) with
the factor set to the level minus set to its reference, other factors as observed.

Intervals come from a bootstrap of the sampled answers within design cells: each cell's yes count is
redrawn as Binomial(n, observed share) (resampling its draws with replacement) and everything is
recomputed. They are basic (reverse-percentile) intervals, ``[2 t - q(1 - a/2), 2 t - q(a/2)]`` for an
estimate ``t`` and bootstrap quantiles ``q`` (Davison & Hinkley 1997, Bootstrap Methods and their
Application, section 5.2.1): resampling noise adds explained deviance to every factor, and the basic
interval moves back by that shift, so a factor without effect gets an interval around 0 (a
contribution's lower bound may then be negative). Exact distributions have no sampling error: no
interval.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> draws = pd.DataFrame({"income": rng.choice(["low", "high"], 2000), "sex": rng.choice(["f", "m"], 2000)})
>>> draws["yes"] = (rng.random(2000) < np.where(draws["income"] == "high", 0.8, 0.2)).astype(int)
>>> result = decompose(draws, ["income", "sex"], bootstrap_draws=20, seed=1)
>>> bool(result.shares.set_index("factor").loc["income", "share"] > 0.95)
True
"""
from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats
from scipy.special import xlogy

from pvsst.core.defaults import ANALYSIS_SEED
from pvsst.core.errors import InputError

METHODS = ("shapley", "drop_one")
MAX_SHAPLEY_FACTORS = 10
SHARE_COLUMNS = ("factor", "df", "contribution", "contribution_low", "contribution_high", "share", "share_low",
                 "share_high", "lr_statistic", "p_value")
EFFECT_COLUMNS = ("factor", "level", "reference", "ame", "ame_low", "ame_high")
TOTAL = "all factors"


@dataclass(frozen=True)
class DesignCells:
    """The decision table pooled into design cells: factor levels, yes counts, draws, weights."""

    factors: tuple[str, ...]
    levels: dict[str, list]
    cells: pd.DataFrame          # one row per design cell: the factor values
    yes: np.ndarray              # yes share per cell
    n: np.ndarray                # draws per cell (1 per row for exact distributions)
    weight: np.ndarray           # population weight per cell (1 without a weight column)
    sampled: bool                # False for exact distributions: no sampling error, no interval

    def design(self, factors, cells: pd.DataFrame | None = None) -> np.ndarray:
        """Intercept plus treatment-coded columns of ``factors`` for ``cells`` (default: the design cells)."""
        cells = self.cells if cells is None else cells
        columns = [np.ones(len(cells))]
        for factor in factors:
            values = cells[factor].astype(object).to_numpy()
            columns.extend((values == level).astype(float) for level in self.levels[factor][1:])
        return np.column_stack(columns)


def design_cells(table: pd.DataFrame, factors, source: str = "decision table") -> DesignCells:
    """Check a decision table (module docstring) and pool its rows into design cells."""
    factors = tuple(str(f) for f in factors)
    if not factors:
        raise InputError(source, "factors", "name at least one factor")
    for column in (*factors, "yes"):
        if column not in table.columns:
            raise InputError(source, column, "missing column")
    if "question" in table.columns and table["question"].nunique() > 1:
        raise InputError(source, "question", "decompose one question at a time")
    yes = pd.to_numeric(table["yes"], errors="coerce").to_numpy(dtype=float)
    if np.isnan(yes).any() or (yes < 0).any() or (yes > 1).any():
        raise InputError(source, "yes", "every yes share must be a number in [0, 1]")
    n = pd.to_numeric(table["n"], errors="coerce").to_numpy(dtype=float) if "n" in table.columns else np.ones(len(yes))
    if np.isnan(n).any() or (n <= 0).any() or (n != np.round(n)).any():
        raise InputError(source, "n", "every n must be a positive whole number of draws")
    weight = (pd.to_numeric(table["weight"], errors="coerce").to_numpy(dtype=float) if "weight" in table.columns
              else np.ones(len(yes)))
    if np.isnan(weight).any() or (weight <= 0).any():
        raise InputError(source, "weight", "every weight must be a positive number")
    levels = {}
    for factor in factors:
        column = table[factor]
        if column.isna().any():
            raise InputError(source, factor, "a row has no level")
        present = set(column.astype(object))
        order = list(column.cat.categories) if isinstance(column.dtype, pd.CategoricalDtype) else sorted(present,
                                                                                                         key=str)
        levels[factor] = [level for level in order if level in present]
        if len(levels[factor]) < 2:
            raise InputError(source, factor, "a factor needs at least two levels")
    sampled = "n" in table.columns or bool(np.isin(yes, (0.0, 1.0)).all())
    keys = table[list(factors)].astype(object)
    frame = keys.assign(_yes=yes * n, _n=n, _w=weight)
    grouped = frame.groupby(list(factors), sort=True, observed=True)
    pooled = grouped.agg(yes=("_yes", "sum"), n=("_n", "sum"), w_min=("_w", "min"), w_max=("_w", "max"))
    if not np.allclose(pooled["w_min"], pooled["w_max"]):
        raise InputError(source, "weight", "rows of one design cell carry different weights")
    cells = pooled.index.to_frame(index=False)
    return DesignCells(factors=factors, levels=levels, cells=cells, yes=(pooled["yes"] / pooled["n"]).to_numpy(),
                       n=pooled["n"].to_numpy(), weight=pooled["w_min"].to_numpy(), sampled=sampled)


class _Fitter:
    """Deviances and fits of sub-models on one set of yes-shares (memoised by factor subset)."""

    def __init__(self, design: DesignCells, yes: np.ndarray):
        self.design, self.yes = design, yes
        self.var_weights = design.n * design.weight / design.weight.mean()
        self._deviance: dict[tuple[str, ...], float] = {}
        self._full = None     # the fit of every factor, used for the deviance and the marginal effects

    def fit(self, factors: tuple[str, ...]):
        if factors == self.design.factors and self._full is not None:
            return self._full
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # separation in a sub-model: the deviance is still its limit
            result = sm.GLM(self.yes, self.design.design(factors), family=sm.families.Binomial(),
                            var_weights=self.var_weights).fit()
        if factors == self.design.factors:
            self._full = result
        return result

    def deviance(self, factors: tuple[str, ...]) -> float:
        """The deviance of the individual answers (module docstring) under the model of ``factors``."""
        key = tuple(f for f in self.design.factors if f in factors)
        if key not in self._deviance:
            p = np.clip(self.fit(key).fittedvalues, 1e-15, 1 - 1e-15)
            y = self.yes
            self._deviance[key] = float(-2 * (self.var_weights * (xlogy(y, p) + xlogy(1 - y, 1 - p))).sum())
        return self._deviance[key]


def _contributions(fitter: _Fitter, method: str) -> tuple[np.ndarray, float]:
    factors = fitter.design.factors
    null, full = fitter.deviance(()), fitter.deviance(factors)
    if null <= 0:
        return np.zeros(len(factors)), 0.0
    r2 = lambda subset: 1.0 - fitter.deviance(subset) / null   # noqa: E731
    k = len(factors)
    if method == "drop_one":
        drops = [(fitter.deviance(tuple(g for g in factors if g != f)) - full) / null for f in factors]
        return np.array(drops), r2(factors)
    values = np.zeros(k)
    for i, factor in enumerate(factors):
        rest = [f for f in factors if f != factor]
        for size in range(k):
            weight = math.factorial(size) * math.factorial(k - size - 1) / math.factorial(k)
            for subset in itertools.combinations(rest, size):
                values[i] += weight * (r2(subset + (factor,)) - r2(subset))
    return values, r2(factors)


def _effects(fitter: _Fitter) -> np.ndarray:
    design = fitter.design
    result = fitter.fit(design.factors)
    weights = design.n * design.weight
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # a separated fit predicts 0 or 1 through an overflow in exp
        return _level_effects(design, result, weights)


def _level_effects(design: DesignCells, result, weights: np.ndarray) -> np.ndarray:
    out = []
    for factor in design.factors:
        reference = design.cells.assign(**{factor: design.levels[factor][0]})
        base = result.predict(design.design(design.factors, reference))
        for level in design.levels[factor][1:]:
            moved = result.predict(design.design(design.factors, design.cells.assign(**{factor: level})))
            out.append(float(np.average(moved - base, weights=weights)))
    return np.array(out)


@dataclass(frozen=True)
class Decomposition:
    """The decomposition of one decision table: ``shares`` (:data:`SHARE_COLUMNS`, a last row for all
    factors together), ``effects`` (:data:`EFFECT_COLUMNS`) and how they were computed."""

    shares: pd.DataFrame
    effects: pd.DataFrame
    method: str
    design_cells: int
    draws: int
    bootstrap_draws: int
    ci_level: float
    interval: str


def decompose(table: pd.DataFrame, factors, method: Literal["shapley", "drop_one"] = "shapley",
              bootstrap_draws: int = 200, seed: int = ANALYSIS_SEED, ci_level: float = 0.95,
              source: str = "decision table") -> Decomposition:
    """Decompose the explained variation of ``yes`` over ``factors`` (module docstring)."""
    if method not in METHODS:
        raise InputError(source, "method", f"unknown method {method!r} ({', '.join(METHODS)})")
    if method == "shapley" and len(tuple(factors)) > MAX_SHAPLEY_FACTORS:
        raise InputError(source, "method", f"shapley fits 2^K models: at most {MAX_SHAPLEY_FACTORS} factors "
                         "(use drop_one)")
    if not 0 < ci_level < 1 or bootstrap_draws < 0:
        raise InputError(source, "bootstrap", "ci_level must lie in (0, 1) and bootstrap_draws be >= 0")
    design = design_cells(table, factors, source)
    fitter = _Fitter(design, design.yes)
    contributions, total = _contributions(fitter, method)
    effects = _effects(fitter)
    full = fitter.deviance(design.factors)
    dfs = np.array([len(design.levels[f]) - 1 for f in design.factors])
    lr = np.array([fitter.deviance(tuple(g for g in design.factors if g != f)) - full for f in design.factors])
    testable = design.sampled and np.allclose(design.weight, design.weight[0])
    p_values = stats.chi2.sf(lr, dfs) if testable else np.full(len(dfs), np.nan)
    total_lr = fitter.deviance(()) - full
    total_p = float(stats.chi2.sf(total_lr, dfs.sum())) if testable else float("nan")
    replicates = []
    rng = np.random.default_rng(seed)
    draws = bootstrap_draws if design.sampled else 0
    for _ in range(draws):
        yes = rng.binomial(design.n.astype(np.int64), design.yes) / design.n
        again = _Fitter(design, yes)
        values, r2 = _contributions(again, method)
        replicates.append(np.concatenate([values, [r2], _share(values), _effects(again)]))
    tail = (1 - ci_level) / 2
    estimate = np.concatenate([contributions, [total], _share(contributions), effects])
    if replicates:
        upper_q, lower_q = np.quantile(np.array(replicates), [1 - tail, tail], axis=0)
        low, high = 2 * estimate - upper_q, 2 * estimate - lower_q
    else:
        low = high = np.full(estimate.size, np.nan)
    k = len(dfs)
    shares = pd.DataFrame({
        "factor": [*design.factors, TOTAL], "df": [*dfs, dfs.sum()],
        "contribution": [*contributions, total], "contribution_low": low[:k + 1], "contribution_high": high[:k + 1],
        "share": [*_share(contributions), 1.0], "share_low": [*low[k + 1:2 * k + 1], 1.0],
        "share_high": [*high[k + 1:2 * k + 1], 1.0], "lr_statistic": [*lr, total_lr], "p_value": [*p_values, total_p]})
    rows = [(f, level, design.levels[f][0]) for f in design.factors for level in design.levels[f][1:]]
    effect_table = pd.DataFrame(rows, columns=["factor", "level", "reference"])
    effect_table["ame"], effect_table["ame_low"], effect_table["ame_high"] = effects, low[2 * k + 1:], high[2 * k + 1:]
    interval = (f"{ci_level:.0%} basic bootstrap, {draws} redraws of the answers within design cells" if draws
                else "none: exact distributions have no sampling error" if not design.sampled else "none: no bootstrap")
    return Decomposition(shares=shares[list(SHARE_COLUMNS)], effects=effect_table[list(EFFECT_COLUMNS)], method=method,
                         design_cells=len(design.cells), draws=int(design.n.sum()), bootstrap_draws=draws,
                         ci_level=ci_level, interval=interval)


def _share(values: np.ndarray) -> np.ndarray:
    total = values.sum()
    return values / total if total > 0 else np.full(values.size, np.nan)
