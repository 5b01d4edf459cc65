"""Simulated state shares scored against a real survey's, beside three yardsticks on the same cells.

Sources compared with the survey's raw (weighted) state shares ``h_g``
(:func:`pvsst.analysis.survey.cells.geography.state_shares`):

- a simulator: its post-stratified state estimates
  (:func:`pvsst.analysis.survey.cells.poststratification.population_estimates`);
- ``cell_oracle`` (:func:`cell_oracle`): the survey's own answer distribution in each cell, post-stratified
  with the population's (census) counts. It is a reference, not a ceiling: a simulator that answered every
  cell exactly like its respondents scores this, and a source that ignores the cells can score better (on
  50,000 census personas with national cells the constant national marginal misses the votetrump state
  shares by 0.061 on average against the oracle's 0.077). When the cells do not
  include the state, its distance from ``h_g`` is the *composition effect*: how far the state's share
  moves when the national within-cell answers are reweighted to the state's census composition.
  Population cells without a respondent have no oracle answer; the oracle renormalises over the covered
  cells and reports ``coverage`` (covered share of each state's population).
- ``national_marginal``: the survey's national (weighted) shares in every state;
- ``uniform``: 1 / K for every option in every state.

Scores (:func:`score_states`):

- ``options``: per source x state x option, ``simulated``, ``real``, ``abs_error = |simulated - real|``;
- ``states``: per source x state, Jensen-Shannon distance (base 2, :func:`pvsst.analysis.survey.fidelity.js_distance`),
  total variation, the uniform distribution's total variation and the SimBench score
  (:func:`pvsst.analysis.survey.simbench.simbench_score`) against ``h_g``. A state whose real answers are close to
  uniform (a 50/50 state on a yes/no question) leaves SimBench's denominator TV(u, h_g) near 0, so its
  per-state score can be huge and negative (CCES 2016 vote choice, national cells: the cell oracle's
  per-state scores range from -3,560 in Alabama, 50.2% to 49.8%, to 99.7). :meth:`StateScores.summary`
  therefore reports the median and the *pooled* score ``100 (1 - sum_g TV(p_g, h_g) / sum_g TV(u, h_g))``,
  the score of all states taken together, beside the mean;
- ``correlations``: per source x option, the Pearson correlation across states of simulated with real
  shares (each state one point, unweighted). A source that is the same in every state (the national
  marginal, uniform) has no variance across states: its correlation is undefined, and is reported as
  0 *by definition* with ``constant = True`` (it ranks no state above another), never as NaN or a fitted
  value.

Examples
--------
>>> real = pd.DataFrame([[0.6, 0.4], [0.3, 0.7]], index=["OH", "TX"], columns=["yes", "no"])
>>> sim = pd.DataFrame([[0.5, 0.5], [0.2, 0.8]], index=["OH", "TX"], columns=["yes", "no"])
>>> scores = score_states(real, {"model": sim, "uniform": uniform_shares(real)})
>>> scores.correlations[["source", "option", "correlation", "constant"]].values.tolist()[:3]
[['model', 'yes', 1.0, False], ['model', 'no', 1.0, False], ['uniform', 'yes', 0.0, True]]
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pvsst.analysis.survey.cells.geography import national_shares, survey_cell_answers
from pvsst.analysis.survey.cells.poststratification import domain_counts, poststratify
from pvsst.analysis.survey.fidelity import js_distance
from pvsst.analysis.survey.simbench import simbench_score, total_variation
from pvsst.core.errors import InputError
from pvsst.personas.cells import row_cell_ids

CELL_ORACLE, NATIONAL_MARGINAL, UNIFORM = "cell_oracle", "national_marginal", "uniform"


@dataclass(frozen=True)
class StateScores:
    """The three score tables of :func:`score_states` (see the module docstring)."""

    options: pd.DataFrame
    states: pd.DataFrame
    correlations: pd.DataFrame

    def summary(self) -> pd.DataFrame:
        """Per source: mean absolute error, mean JS distance, SimBench (mean, median, pooled), mean correlation.

        Examples
        --------
        >>> real = pd.DataFrame([[0.6, 0.4], [0.3, 0.7]], index=["OH", "TX"], columns=["y", "n"])
        >>> score_states(real, {"u": uniform_shares(real)}).summary()["mean_abs_error"].round(3).tolist()
        [0.15]
        """
        errors = self.options.groupby("source", sort=False)["abs_error"].mean()
        by_source = self.states.groupby("source", sort=False)
        states = by_source[["js_distance", "simbench"]].mean()
        sums = by_source[["total_variation", "total_variation_uniform"]].sum()
        correlation = self.correlations.groupby("source", sort=False)["correlation"].mean()
        return pd.DataFrame({"mean_abs_error": errors, "mean_js_distance": states["js_distance"],
                             "mean_simbench": states["simbench"],
                             "median_simbench": by_source["simbench"].median(),
                             "pooled_simbench": 100 * (1 - sums["total_variation"] / sums["total_variation_uniform"]),
                             "mean_correlation": correlation}).reset_index()


def estimate_matrix(estimates: pd.DataFrame, question: str, options, group: str | None = None,
                    **keys) -> pd.DataFrame:
    """(state x option) estimates of one question from an estimates table (rows with level ``geography``).

    With ``group`` (a cell attribute), the (level x option) estimates of that group's levels instead
    (rows ``group`` / ``attribute=level``), so :func:`score_states` scores groups the same way against
    the survey's group shares (:func:`pvsst.analysis.survey.cells.geography.state_shares` with ``geography`` set to
    the group column). ``keys`` select one source (e.g. ``model="m", condition="c"``).

    Examples
    --------
    >>> table = pd.DataFrame({"question": "q", "level": ["geography"] * 2 + ["group"] * 2,
    ...                       "domain": ["OH", "OH", "party=D", "party=D"], "option": ["y", "n"] * 2,
    ...                       "estimate": [0.6, 0.4, 0.9, 0.1]})
    >>> estimate_matrix(table, "q", ["y", "n"]).values.tolist()
    [[0.6, 0.4]]
    >>> estimate_matrix(table, "q", ["y", "n"], group="party").rename_axis(None).to_dict("index")
    {'D': {'y': 0.9, 'n': 0.1}}
    """
    if group is None:
        part = estimates[(estimates["question"] == question) & (estimates["level"] == "geography")]
    else:
        part = estimates[(estimates["question"] == question) & (estimates["level"] == "group")
                         & estimates["domain"].astype(str).str.startswith(f"{group}=")]
        part = part.assign(domain=part["domain"].astype(str).str.slice(len(group) + 1))
    for name, value in keys.items():
        part = part[part[name] == value]
    if part.empty:
        what = "geography" if group is None else f"group {group!r}"
        raise InputError("estimates", "question", f"no {what} estimates for {question!r} {keys or ''}".strip())
    wide = part.pivot(index="domain", columns="option", values="estimate")
    return wide.reindex(columns=[str(o) for o in options]).rename_axis(index=group or "state", columns=None)


def cell_oracle(survey: pd.DataFrame, attributes, question: str, options, counts: pd.DataFrame,
                cells: pd.DataFrame, weight: str | None = None) -> tuple[pd.DataFrame, pd.Series]:
    """The survey's cell distributions post-stratified with the population's counts, and each state's coverage.

    Returns (state x option shares, coverage per state).

    Examples
    --------
    >>> from pvsst.personas.cells import cell_table
    >>> survey = pd.DataFrame({"sex": ["f", "f", "m"], "q": ["a", "b", "b"]})
    >>> people = pd.DataFrame({"persona_id": list("pqrs"), "sex": ["f", "m", "m", "m"], "state": ["OH"] * 4})
    >>> cells = cell_table(people, ["sex"])
    >>> shares, coverage = cell_oracle(survey, ["sex"], "q", ["a", "b"], cells.counts, cells.cells)
    >>> shares.values.tolist(), coverage.tolist()
    ([[0.125, 0.875]], [1.0])
    """
    return oracle_shares(survey_cell_shares(survey, attributes, question, options, weight), options, counts, cells)


def survey_cell_shares(survey: pd.DataFrame, attributes, question: str, options, weight: str | None = None
                       ) -> dict[str, np.ndarray]:
    """Each cell's (weighted) answer distribution among the survey's respondents: cell id -> K shares
    (:func:`pvsst.analysis.survey.cells.geography.survey_cell_answers`, one array per cell).

    Examples
    --------
    >>> survey = pd.DataFrame({"sex": ["f", "f", "m"], "q": ["a", "b", "b"]})
    >>> sorted(p.tolist() for p in survey_cell_shares(survey, ["sex"], "q", ["a", "b"]).values())
    [[0.0, 1.0], [0.5, 0.5]]
    """
    answers = survey_cell_answers(survey, attributes, question, options, weight)
    k = len(options)
    return dict(zip(answers["cell_id"].to_numpy()[::k], answers["probability"].to_numpy().reshape(-1, k)))


def oracle_shares(distribution: dict[str, np.ndarray], options, counts: pd.DataFrame, cells: pd.DataFrame
                  ) -> tuple[pd.DataFrame, pd.Series]:
    """:func:`cell_oracle` from the cells' distributions (:func:`survey_cell_shares`): (state x option
    shares, coverage per state).

    Examples
    --------
    >>> from pvsst.personas.cells import cell_table
    >>> people = pd.DataFrame({"persona_id": list("pq"), "sex": ["f", "m"], "state": ["OH"] * 2})
    >>> cells = cell_table(people, ["sex"])
    >>> women = survey_cell_shares(pd.DataFrame({"sex": ["f"], "q": ["a"]}), ["sex"], "q", ["a", "b"])
    >>> shares, coverage = oracle_shares(women, ["a", "b"], cells.counts, cells.cells)
    >>> shares.values.tolist(), coverage.tolist()
    ([[1.0, 0.0]], [0.5])
    """
    population_ids = [str(c) for c in cells["cell_id"]]
    keep = np.array([c in distribution for c in population_ids], dtype=bool)
    if not keep.any():
        raise InputError("survey", "cells", "no population cell has a survey respondent (do the cell "
                         "attributes use the same values in both tables?)")
    p = np.array([distribution[c] for c in population_ids if c in distribution])
    labels, totals = domain_counts(counts, cells.assign(cell_id=population_ids), population_ids)
    geo = (labels["level"] == "geography").to_numpy()
    matrix = totals[geo][:, keep]
    shares = poststratify(matrix, p)
    coverage = matrix.sum(axis=1) / totals[geo].sum(axis=1)
    states = pd.Index(labels["domain"][geo].to_numpy(), name="state")
    return (pd.DataFrame(shares, index=states, columns=[str(o) for o in options]),
            pd.Series(coverage, index=states, name="coverage"))


def answered_counts(counts: pd.DataFrame, respondents: pd.DataFrame, attributes, question: str) -> pd.DataFrame:
    """A population of the survey's own respondents, less those who skipped ``question``: each cell x state
    count times the share of that cell x state's respondents who answered.

    When the population *is* the respondents, every count becomes the number who answered, so the cell
    oracle post-stratifies over the same people the survey's raw shares count (item nonresponse is
    per question). A cell x state without a respondent keeps its count.

    Parameters
    ----------
    counts : pandas.DataFrame
        ``cell_id``, ``state`` and ``count`` (the population's).
    respondents : pandas.DataFrame
        The respondents with the cell attributes, ``state`` and the question's answers (missing: skipped).
    attributes : sequence of str
        The cell attributes.
    question : str
        The question's column.

    Returns
    -------
    pandas.DataFrame
        ``counts`` with ``count`` scaled.

    Examples
    --------
    >>> people = pd.DataFrame({"sex": ["f", "f", "m"], "state": ["OH"] * 3, "q": ["a", None, "b"]})
    >>> from pvsst.personas.cells import cell_table
    >>> cells = cell_table(people.assign(persona_id=["x", "y", "z"]), ["sex"])
    >>> answered_counts(cells.counts, people, ["sex"], "q")["count"].tolist()
    [1.0, 1.0]
    """
    known = respondents.dropna(subset=list(attributes))
    frame = pd.DataFrame({"cell_id": row_cell_ids(known, attributes, "survey"),
                          "state": known["state"].astype(str).to_numpy(),
                          "answered": known[question].notna().to_numpy(dtype=float)})
    rate = frame.groupby(["cell_id", "state"])["answered"].mean()
    key = pd.MultiIndex.from_arrays([counts["cell_id"].astype(str), counts["state"].astype(str)])
    share = rate.reindex(key).fillna(1.0).to_numpy()
    return counts.assign(count=counts["count"].to_numpy(dtype=float) * share)


def national_marginal_shares(survey: pd.DataFrame, question: str, options, states,
                             weight: str | None = None) -> pd.DataFrame:
    """The survey's national (weighted) shares repeated for every state.

    Examples
    --------
    >>> survey = pd.DataFrame({"q": ["a", "a", "b"]})
    >>> national_marginal_shares(survey, "q", ["a", "b"], ["OH", "TX"]).round(3).values.tolist()
    [[0.667, 0.333], [0.667, 0.333]]
    """
    marginal = national_shares(survey, question, options, weight)
    return pd.DataFrame(np.tile(marginal, (len(states), 1)), index=pd.Index(list(states), name="state"),
                        columns=[str(o) for o in options])


def uniform_shares(real: pd.DataFrame) -> pd.DataFrame:
    """1 / K in every cell of a (state x option) table shaped like ``real``.

    Examples
    --------
    >>> uniform_shares(pd.DataFrame([[0.2, 0.8]], index=["OH"], columns=["a", "b"])).values.tolist()
    [[0.5, 0.5]]
    """
    return pd.DataFrame(1.0 / real.shape[1], index=real.index, columns=real.columns)


def _correlation(x: np.ndarray, y: np.ndarray) -> tuple[float, bool]:
    if np.allclose(x, x[0], rtol=0.0, atol=1e-12):
        return 0.0, True
    if np.allclose(y, y[0], rtol=0.0, atol=1e-12):
        return float("nan"), False
    return float(np.corrcoef(x, y)[0, 1]), False


def score_states(real: pd.DataFrame, sources: dict[str, pd.DataFrame]) -> StateScores:
    """Score every source's (state x option) shares against the real ones (see the module docstring).

    States are those of ``real``; a source lacking one of them raises :class:`InputError`.
    """
    states = list(real.index)
    options = list(real.columns)
    h = real.to_numpy(dtype=float)
    option_rows, state_rows, corr_rows = [], [], []
    for name, table in sources.items():
        missing = [s for s in states if s not in table.index]
        if missing:
            raise InputError(f"source {name}", "state", f"no estimate for {', '.join(map(str, missing[:5]))}")
        p = table.reindex(index=states, columns=options).to_numpy(dtype=float)
        option_rows.append(pd.DataFrame({"source": name, "state": np.repeat(states, len(options)),
                                         "option": np.tile(options, len(states)), "simulated": p.ravel(),
                                         "real": h.ravel(), "abs_error": np.abs(p - h).ravel()}))
        state_rows.append(pd.DataFrame({"source": name, "state": states, "js_distance": js_distance(p, h),
                                        "total_variation": total_variation(p, h),
                                        "total_variation_uniform": total_variation(np.full_like(h, 1 / h.shape[1]), h),
                                        "simbench": simbench_score(p, h)}))
        for j, option in enumerate(options):
            value, constant = _correlation(p[:, j], h[:, j])
            corr_rows.append({"source": name, "option": option, "correlation": value, "constant": constant,
                              "n_states": len(states)})
    return StateScores(options=pd.concat(option_rows, ignore_index=True),
                       states=pd.concat(state_rows, ignore_index=True),
                       correlations=pd.DataFrame(corr_rows))
