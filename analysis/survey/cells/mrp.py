"""Multilevel regression and post-stratification (MRP) of a survey's answers on a population's cells.

For one option ``k`` of a question, respondent ``i`` in state ``s`` (region ``r(s)``) with cell
attributes ``x_i`` answers ``k`` with probability

    logit P(y_i = k) = alpha + x_i' beta + gamma_r(s) + z_s' delta + u_s,        u_s ~ N(0, sigma^2),

cell attributes and the state's Census region as fixed effects (one dummy per level but the first),
optional state-level predictors ``z_s`` as continuous fixed effects (each standardised over the states
it is given for: ``z_s = (v_s - mean) / sd``; a state without a value takes the mean, ``z_s = 0``), and
a state effect ``u_s`` shrunk towards its region and predictors (Park, Gelman & Bafumi 2004, whose state
predictor is the previous presidential vote; Gelman & Little 1997).
The fit is the posterior mode of ``(alpha, beta, gamma, delta, u)`` given ``sigma`` (a ridge-penalised
binomial regression on the respondents grouped by cell and state, Newton-Raphson), with ``sigma``
chosen on :data:`SIGMA_GRID` (climbing from its middle while it rises) by the Laplace approximation of
the marginal likelihood

    log p(y | sigma) ~ l(theta_hat) - |u_hat|^2 / (2 sigma^2) - S log sigma - log det(H) / 2,

``H`` the penalised information at the mode and ``S`` the number of states (empirical Bayes).

State estimates (:func:`mrp_state_shares`) leave each state's own respondents out: for state ``s`` the
model is fitted on every other state's respondents (``sigma`` chosen on them too) and the state's
population cells are predicted with its region's effect, its own predictors ``z_s`` and ``u_s = 0``; then

    estimate_s = sum_c N_sc / N_s * p_hat_c,

post-stratified with the population's counts ``N_sc``. A question with more than two options gets one
such model per option (one against the rest), the cell predictions normalised to sum to 1. It is a
reference, the estimate a survey methodologist would make from these cells without the state's own
sample; it is not a ceiling.

References
----------
.. [1] A. Gelman and T. C. Little, "Poststratification into many categories using hierarchical
   logistic regression", Survey Methodology 23(2), 127-135, 1997.
.. [2] D. K. Park, A. Gelman and J. Bafumi, "Bayesian multilevel estimation with poststratification:
   state-level estimates from national polls", Political Analysis 12(4), 375-385, 2004.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> states = np.repeat(["OH", "TX", "CA", "NY"], 200)
>>> survey = pd.DataFrame({"sex": rng.choice(["f", "m"], states.size), "state": states})
>>> survey["q"] = np.where(rng.random(states.size) < np.where(survey["sex"] == "f", 0.7, 0.3), "a", "b")
>>> counts = pd.DataFrame({"cell_id": ["f", "m", "f"], "state": ["OH", "OH", "TX"], "count": [1, 1, 1]})
>>> cells = pd.DataFrame({"cell_id": ["f", "m"], "sex": ["f", "m"]})
>>> shares = mrp_state_shares(survey, ["sex"], "q", ["a", "b"], counts, cells)
>>> shares.round(1).values.tolist()
[[0.5, 0.5], [0.7, 0.3]]
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from pvsst.analysis.survey.cells.poststratification import domain_counts, poststratify
from pvsst.core.errors import InputError
from pvsst.personas.geography import REGION_OF_STATE

MRP = "mrp"
SIGMA_GRID = (0.05, 0.071, 0.1, 0.141, 0.2, 0.283, 0.4, 0.566, 0.8, 1.131, 1.6, 2.263)
"""Standard deviations of the state effect (logit scale) the marginal likelihood chooses from (steps of
sqrt(2))."""
FIXED_PRECISION = 1e-4  # a N(0, 100^2) prior on the fixed effects: flat in practice, identifies an empty level
STATE_ATTRIBUTES = ("state", "state_name")
StatePredictors = Mapping[str, Mapping[str, float]]
"""State-level predictors: predictor name -> (state postal code -> value), e.g. ``{"dem_share_2012": {"OH":
0.507, ...}}``."""


@dataclass(frozen=True)
class StateLogitFit:
    """A fitted :func:`fit_state_logit` model.

    ``coefficients``: the fixed effects by name (``intercept``, ``attribute=level``, ``region=name``, and
    each state-level predictor by its name, per standard deviation of the predictor);
    ``state_effects``: ``u_s`` by state; ``sigma``: the chosen standard deviation of the state effect.
    """

    coefficients: pd.Series
    state_effects: pd.Series
    sigma: float
    respondents: float


def _grouped(frame: pd.DataFrame, attributes, question: str, option: str, weight: str | None) -> pd.DataFrame:
    """Respondents who answered, grouped by cell attributes x state: ``successes`` and ``trials`` (weighted)."""
    answered = frame[frame[question].notna()]
    mass = np.ones(len(answered)) if weight is None else answered[weight].to_numpy(dtype=float)
    keys = [*attributes, "state"]
    data = answered[keys].astype(str).assign(trials=mass, successes=mass * (answered[question].astype(str)
                                                                           == str(option)).to_numpy())
    return data.groupby(keys, sort=True, as_index=False)[["successes", "trials"]].sum()


def _levels(grouped: pd.DataFrame, attributes, region_of: Mapping[str, str] | None) -> dict[str, list[str]]:
    levels = {a: sorted(pd.unique(grouped[a].to_numpy(dtype=object))) for a in attributes}
    if region_of is not None:
        levels["region"] = sorted({region_of.get(s, "unknown") for s in pd.unique(grouped["state"].to_numpy(object))})
    return levels


def _fixed_design(frame: pd.DataFrame, levels: dict[str, list[str]],
                  covariates: tuple[str, ...] = ()) -> tuple[np.ndarray, list[str]]:
    """Intercept and one dummy per level but the first of each attribute; a level not in ``levels`` (no
    respondent had it) gets the mean of the levels' effects, ``1 / L`` in each dummy; then the numeric
    ``covariates`` columns as they are."""
    columns, names = [np.ones(len(frame))], ["intercept"]
    for attribute, values in levels.items():
        column = frame[attribute].to_numpy(dtype=object).astype(str)
        unseen = ~np.isin(column, values)
        for value in values[1:]:
            columns.append(np.where(unseen, 1.0 / len(values), (column == value).astype(float)))
            names.append(f"{attribute}={value}")
    for covariate in covariates:
        columns.append(frame[covariate].to_numpy(dtype=float))
        names.append(covariate)
    return np.column_stack(columns), names


def standardised_predictors(state_predictors: StatePredictors | None) -> dict[str, dict[str, float]]:
    """Each state-level predictor standardised over the states it gives: ``(v_s - mean) / sd``.

    Parameters
    ----------
    state_predictors : mapping, optional
        Predictor name -> (state -> value).

    Returns
    -------
    dict
        Predictor name -> (state -> standardised value); empty for None.

    Examples
    --------
    >>> standardised_predictors({"v": {"OH": 1.0, "TX": 3.0}})
    {'v': {'OH': -1.0, 'TX': 1.0}}

    Notes
    -----
    ``sd`` is the population standard deviation over the states (``ddof = 0``). A predictor that does not
    vary (or has fewer than two states) cannot be told from the intercept and raises ``InputError``.
    """
    out = {}
    for name, values in (state_predictors or {}).items():
        series = pd.Series({str(k): float(v) for k, v in values.items()}, dtype=float).dropna()
        sd = float(series.std(ddof=0)) if len(series) > 1 else 0.0
        if not sd > 0:
            raise InputError("survey", name, "a state-level predictor must vary across at least two states")
        out[str(name)] = ((series - series.mean()) / sd).to_dict()
    return out


def _with_predictors(frame: pd.DataFrame, predictors: dict[str, dict[str, float]]) -> pd.DataFrame:
    """``frame`` (with ``state``) plus one column per predictor: the state's standardised value (0: none)."""
    states = frame["state"].astype(str)
    return frame.assign(**{name: states.map(z).fillna(0.0).to_numpy(float) for name, z in predictors.items()})


def _penalised_logit(fixed: np.ndarray, state: np.ndarray, n_states: int, successes: np.ndarray,
                     trials: np.ndarray, state_precision: float, start: np.ndarray | None = None,
                     tol: float = 1e-9, max_iter: int = 100) -> tuple[np.ndarray, float]:
    """Mode of the binomial log likelihood of ``fixed @ beta + u[state]`` minus the penalty
    ``FIXED_PRECISION |beta|^2 / 2 + state_precision |u|^2 / 2`` (Newton-Raphson), as one vector
    ``(beta, u)``, and the Laplace term ``log-likelihood - penalty - log det(H) / 2`` at the mode.

    The state block of the Hessian is diagonal, so each step solves through its Schur complement:
    ``(p + S)^2`` work becomes ``p^2`` per row.
    """
    p = fixed.shape[1]
    theta = np.zeros(p + n_states) if start is None else start.copy()
    columns = np.ascontiguousarray(fixed.T)  # each column contiguous: the per-column products below are cheap

    def curvature(beta, u):
        eta = fixed @ beta + u[state]
        mu = 1.0 / (1.0 + np.exp(-eta))
        w = trials * mu * (1 - mu)
        a = (fixed * w[:, None]).T @ fixed + FIXED_PRECISION * np.eye(p)
        cross = np.column_stack([np.bincount(state, weights=columns[j] * w, minlength=n_states)
                                 for j in range(p)])                  # B' (S, p)
        d = np.bincount(state, weights=w, minlength=n_states) + state_precision
        return eta, mu, a, cross, d

    for _ in range(max_iter):
        beta, u = theta[:p], theta[p:]
        eta, mu, a, cross, d = curvature(beta, u)
        residual = successes - trials * mu
        g_beta = fixed.T @ residual - FIXED_PRECISION * beta
        g_u = np.bincount(state, weights=residual, minlength=n_states) - state_precision * u
        schur = a - cross.T @ (cross / d[:, None])
        step_beta = np.linalg.solve(schur, g_beta - cross.T @ (g_u / d))
        step_u = (g_u - cross @ step_beta) / d
        theta = theta + np.concatenate([step_beta, step_u])
        if max(np.max(np.abs(step_beta)), np.max(np.abs(step_u), initial=0.0)) < tol:
            break
    beta, u = theta[:p], theta[p:]
    eta, mu, a, cross, d = curvature(beta, u)
    loglik = float(np.sum(successes * eta - trials * np.logaddexp(0.0, eta)))
    _, logdet_schur = np.linalg.slogdet(a - cross.T @ (cross / d[:, None]))
    penalty = 0.5 * (FIXED_PRECISION * float(beta @ beta) + state_precision * float(u @ u))
    return theta, loglik - penalty - 0.5 * (float(np.sum(np.log(d))) + logdet_schur)


def _regions(states: pd.Series, region_of: Mapping[str, str]) -> np.ndarray:
    """Each row's region (``unknown``: a state ``region_of`` lacks), looked up once per distinct state."""
    codes, distinct = pd.factorize(states)
    return np.array([region_of.get(s, "unknown") for s in distinct] + ["unknown"], dtype=object)[codes]


def _fit(grouped: pd.DataFrame, levels: dict[str, list[str]], region_of: Mapping[str, str] | None,
         sigmas, predictors: dict[str, dict[str, float]]) -> tuple[np.ndarray, list[str], list[str], float]:
    """Fixed effects and state effects (one vector), their names, the states and the chosen sigma."""
    frame = grouped if region_of is None else grouped.assign(region=_regions(grouped["state"], region_of))
    fixed, names = _fixed_design(_with_predictors(frame, predictors), levels, tuple(predictors))
    states, state_index = np.unique(grouped["state"].to_numpy(), return_inverse=True)
    y, n = grouped["successes"].to_numpy(float), grouped["trials"].to_numpy(float)
    sigmas = sorted(sigmas)
    fits: dict[int, tuple[float, np.ndarray]] = {}

    def evidence(i: int) -> float:
        if i not in fits:
            nearest = min(fits, key=lambda j: abs(j - i), default=None)
            theta, laplace = _penalised_logit(fixed, state_index, len(states), y, n, sigmas[i] ** -2.0,
                                              None if nearest is None else fits[nearest][1])
            fits[i] = (laplace - len(states) * np.log(sigmas[i]), theta)
        return fits[i][0]

    # Climb the grid from its middle while the evidence rises (it is unimodal in sigma in practice);
    # every fit starts from the same place, so a fold's choice depends on its own data only.
    i = len(sigmas) // 2
    evidence(i)  # a one-point grid has no neighbour to compare with
    while True:
        better = [j for j in (i - 1, i + 1) if 0 <= j < len(sigmas) and evidence(j) > evidence(i)]
        if not better:
            break
        i = max(better, key=evidence)
    return fits[i][1], names, list(states), float(sigmas[i])


def fit_state_logit(respondents: pd.DataFrame, attributes, question: str, option: str, *,
                    weight: str | None = None, region_of: Mapping[str, str] | None = REGION_OF_STATE,
                    sigmas=SIGMA_GRID, state_predictors: StatePredictors | None = None) -> StateLogitFit:
    """Fit the module's logistic model of answering ``option`` to ``question`` on every respondent given.

    Parameters
    ----------
    respondents : pandas.DataFrame
        One row per respondent: the cell attributes, ``state`` and the question's column (option codes;
        missing: did not answer, left out); ``weight`` if given.
    attributes : sequence of str
        The cell attributes (fixed effects); ``state`` itself is the state effect.
    question, option : str
        The question's column and the option modelled.
    weight : str, optional
        A weight column (its values count as respondents).
    region_of : mapping, optional
        State -> region for the region fixed effects (default: Census regions); None: no region term.
    sigmas : sequence of float
        The standard deviations of the state effect to choose from.
    state_predictors : mapping, optional
        State-level predictors (name -> state -> value), standardised by :func:`standardised_predictors`:
        one continuous fixed effect each.

    Returns
    -------
    StateLogitFit

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> states = np.repeat(["OH", "TX"], 2000)
    >>> people = pd.DataFrame({"sex": rng.choice(["f", "m"], 4000), "state": states})
    >>> people["q"] = np.where(rng.random(4000) < np.where(people["sex"] == "m", 0.73, 0.5), "y", "n")
    >>> fit = fit_state_logit(people, ["sex"], "q", "y", region_of=None)
    >>> round(float(fit.coefficients["sex=m"]), 1)
    1.0
    """
    attributes = [a for a in attributes if a not in STATE_ATTRIBUTES]
    _require(respondents, [*attributes, "state", question] + ([weight] if weight else []))
    grouped = _grouped(respondents.dropna(subset=[*attributes, "state"]), attributes, question, option, weight)
    if grouped.empty:
        raise InputError("survey", question, "no respondent answered the question")
    levels = _levels(grouped, attributes, region_of)
    predictors = standardised_predictors(state_predictors)
    with threadpool_limits(1):  # small matrices: BLAS threads only contend (5x slower on a busy machine)
        theta, names, states, sigma = _fit(grouped, levels, region_of, sigmas, predictors)
    return StateLogitFit(pd.Series(theta[:len(names)], index=names), pd.Series(theta[len(names):], index=states),
                         sigma, float(grouped["trials"].sum()))


def _require(frame: pd.DataFrame, columns) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError("survey", missing[0], f"no column {missing[0]!r} in the respondents (MRP needs the cell "
                         "attributes, state and the answers)")


def mrp_state_shares(respondents: pd.DataFrame, attributes, question: str, options, counts: pd.DataFrame,
                     cells: pd.DataFrame, *, weight: str | None = None,
                     region_of: Mapping[str, str] | None = REGION_OF_STATE, sigmas=SIGMA_GRID,
                     state_predictors: StatePredictors | None = None) -> pd.DataFrame:
    """(state x option) MRP estimates, each state's model fitted without its own respondents.

    Parameters
    ----------
    respondents : pandas.DataFrame
        As :func:`fit_state_logit` takes them.
    attributes : sequence of str
        The cell attributes (columns of ``cells``); ``state`` among them is the geography, not an effect.
    question : str
        The question's column.
    options : sequence
        Its option codes (column order).
    counts, cells : pandas.DataFrame
        The population: ``cell_id, state, count`` and ``cell_id`` with the attributes.
    weight : str, optional
        A weight column of the respondents.
    region_of : mapping, optional
        State -> region (default: Census regions); None: no region term.
    sigmas : sequence of float
        The candidate standard deviations of the state effect.
    state_predictors : mapping, optional
        State-level predictors (name -> state -> value): continuous fixed effects, standardised
        (:func:`standardised_predictors`); a left-out state is predicted with its own values.

    Returns
    -------
    pandas.DataFrame
        Index: the population's states (sorted as :func:`domain_counts` sorts them); columns: the options.

    Notes
    -----
    For state ``s``: fit on the respondents of every other state, predict each population cell ``c`` of
    ``s`` as ``expit(alpha + x_c' beta + gamma_r(s) + z_s' delta)`` (``u_s = 0``; a level no respondent has, such as
    a region with no other state, at the mean of its attribute's levels), normalise over the options, and
    post-stratify: ``sum_c N_sc / N_s p_hat_c`` (:func:`mrp_predictions`, :func:`poststratified_states`).
    """
    predictions = mrp_predictions(respondents, attributes, question, options, counts, cells, weight=weight,
                                  region_of=region_of, sigmas=sigmas, state_predictors=state_predictors)
    return poststratified_states(predictions, counts, cells)


@dataclass(frozen=True)
class CellPredictions:
    """Leave-state-out cell predictions: ``shares[state]`` is the (C, K) answer distribution of every
    population cell (rows in ``cell_ids`` order; NaN for a cell with no population in the state)."""

    cell_ids: tuple[str, ...]
    options: tuple[str, ...]
    shares: dict[str, np.ndarray]


def mrp_predictions(respondents: pd.DataFrame, attributes, question: str, options, counts: pd.DataFrame,
                    cells: pd.DataFrame, *, weight: str | None = None,
                    region_of: Mapping[str, str] | None = REGION_OF_STATE, sigmas=SIGMA_GRID,
                    state_predictors: StatePredictors | None = None) -> CellPredictions:
    """Each state's population cells predicted by the model fitted without the state's respondents.

    Arguments as :func:`mrp_state_shares`; post-stratify the result with :func:`poststratified_states`
    (any counts with the same cells, such as voters instead of residents).
    """
    options = tuple(str(o) for o in options)
    predictors = standardised_predictors(state_predictors)
    fixed_attributes = [a for a in attributes if a not in STATE_ATTRIBUTES]
    _require(respondents, [*fixed_attributes, "state", question] + ([weight] if weight else []))
    known = respondents.dropna(subset=[*fixed_attributes, "state"])
    cell_ids = [str(c) for c in cells["cell_id"]]
    labels, matrix = domain_counts(counts, cells.assign(cell_id=cell_ids), cell_ids, geography="state")
    geo = (labels["level"] == "geography").to_numpy()
    states, matrix = labels["domain"][geo].to_list(), matrix[geo]
    population = cells.assign(cell_id=cell_ids)[["cell_id", *fixed_attributes]].astype(str)
    modelled = options if len(options) > 2 else options[:1]
    grouped = {o: _grouped(known, fixed_attributes, question, o, weight) for o in modelled}
    shares = {}
    for g, state in enumerate(states):
        people = matrix[g] > 0
        frame = _with_predictors(population[people].assign(state=state), predictors)
        if region_of is not None:
            frame = frame.assign(region=region_of.get(state, "unknown"))
        p = np.zeros((len(frame), len(modelled)))
        for j, option in enumerate(modelled):
            train = grouped[option][grouped[option]["state"] != state]
            if train.empty:
                raise InputError("survey", question, f"no respondent outside {state} answered: no MRP estimate")
            levels = _levels(train, fixed_attributes, region_of)
            with threadpool_limits(1):  # small matrices: BLAS threads only contend
                theta, names, _, _ = _fit(train, levels, region_of, sigmas, predictors)
            x, _ = _fixed_design(frame, levels, tuple(predictors))
            p[:, j] = 1.0 / (1.0 + np.exp(-(x @ theta[:len(names)])))
        full = np.full((len(cell_ids), len(options)), np.nan)
        full[people] = p / p.sum(axis=1, keepdims=True) if len(options) > 2 else \
            np.column_stack([p[:, 0], 1 - p[:, 0]])[:, :len(options)]
        shares[state] = full
    return CellPredictions(tuple(cell_ids), options, shares)


def poststratified_states(predictions: CellPredictions, counts: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """(state x option) ``sum_c N_sc / N_s p_hat_sc`` of leave-state-out predictions with the given counts."""
    cell_ids = list(predictions.cell_ids)
    labels, matrix = domain_counts(counts, cells.assign(cell_id=cells["cell_id"].astype(str)), cell_ids,
                                   geography="state")
    geo = (labels["level"] == "geography").to_numpy()
    states, matrix = labels["domain"][geo].to_list(), matrix[geo]
    shares = np.full((len(states), len(predictions.options)), np.nan)
    for g, state in enumerate(states):
        people = matrix[g] > 0
        if state in predictions.shares and people.any():
            shares[g] = poststratify(matrix[g][None, people], predictions.shares[state][people])[0]
    return pd.DataFrame(shares, index=pd.Index(states, name="state"), columns=list(predictions.options))


def poststratified_groups(predictions: CellPredictions, counts: pd.DataFrame, cells: pd.DataFrame,
                          groups) -> pd.DataFrame:
    """(group x option) shares of per-state cell predictions: each group pooled over every state.

    Parameters
    ----------
    predictions : CellPredictions
        Per-state cell predictions (NaN rows: cells without a prediction, left out).
    counts, cells : pandas.DataFrame
        The population's ``cell_id, state, count`` and ``cell_id`` with the attributes.
    groups : sequence of str
        Cell attributes whose levels are the groups.

    Returns
    -------
    pandas.DataFrame
        Index: ``attribute=level`` (as :func:`domain_counts` names the groups); columns: the options.

    Notes
    -----
    ``share_g = sum_s sum_{c in g} N_sc p_hat_sc / sum_s sum_{c in g} N_sc`` over the cells ``c`` with a
    prediction in state ``s``: with leave-state-out MRP predictions every state's part comes from the
    model fitted without it.

    Examples
    --------
    >>> cells = pd.DataFrame({"cell_id": ["a", "b"], "sex": ["f", "m"]})
    >>> counts = pd.DataFrame({"cell_id": ["a", "a", "b"], "state": ["OH", "TX", "TX"], "count": [1, 3, 2]})
    >>> p = CellPredictions(("a", "b"), ("y", "n"), {"OH": np.array([[0.2, 0.8], [np.nan, np.nan]]),
    ...                                             "TX": np.array([[0.6, 0.4], [0.5, 0.5]])})
    >>> poststratified_groups(p, counts, cells, ["sex"]).round(2).values.tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    cell_ids = list(predictions.cell_ids)
    labels, matrix = domain_counts(counts, cells.assign(cell_id=cells["cell_id"].astype(str)), cell_ids,
                                   geography="state")
    geo = (labels["level"] == "geography").to_numpy()
    states = labels["domain"][geo].to_list()
    k = len(predictions.options)
    p = np.stack([predictions.shares.get(s, np.full((len(cell_ids), k), np.nan)) for s in states])  # (S, C, K)
    known = np.isfinite(p).all(axis=2)
    mass = np.where(known, matrix[geo], 0.0)                                                        # (S, C)
    totals = np.einsum("sc,sck->ck", mass, np.where(known[:, :, None], p, 0.0))
    weights = mass.sum(axis=0)
    by_cell = cells.assign(cell_id=cells["cell_id"].astype(str)).set_index("cell_id")
    rows, names = [], []
    for group in groups:
        values = by_cell[group].reindex(cell_ids).astype(str).to_numpy()
        for level in sorted(set(values)):
            inside = values == level
            total = weights[inside].sum()
            rows.append(totals[inside].sum(axis=0) / total if total > 0 else np.full(k, np.nan))
            names.append(f"{group}={level}")
    return pd.DataFrame(np.array(rows).reshape(len(rows), k), index=pd.Index(names, name="group"),
                        columns=list(predictions.options))
