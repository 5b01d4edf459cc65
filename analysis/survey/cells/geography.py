"""A real survey by geography: answer shares per state, their sampling noise, and which states differ.

Input is a respondent table (one row per respondent) with a geography column (e.g. ``state``), an
answer column holding option codes (missing: no substantive answer; such respondents are left out of
that question) and optionally a weight column. Weighted shares are ``sum_i w_i 1[a_i = k] / sum_i w_i``
over the respondents of the state who answered.

Sampling noise (:func:`state_bootstrap`): a percentile bootstrap that resamples respondents with
replacement *within each state* (the state's sample is what its share is estimated from), each carrying
its weight; draw 0 is the observed sample. :func:`state_noise` summarises it per state x option;
:func:`indistinguishable_states` lists, per option, every pair of states whose bootstrap interval of
the difference of shares contains 0: differences the survey itself cannot resolve, so no simulator can be
judged on them.

:func:`survey_cell_answers` turns the respondents into the cell answer table of
:mod:`pvsst.analysis.survey.cells.poststratification` (``cell_id, question, option, probability``, plus
``respondents``):
each cell's (weighted) answer distribution, with cell ids of :func:`pvsst.personas.cells.cell_id_of`, so survey
cells and population cells match.

Examples
--------
>>> import pandas as pd
>>> survey = pd.DataFrame({"state": ["OH", "OH", "OH", "TX"], "vote": ["yes", "no", "yes", None]})
>>> state_shares(survey, "vote", ["yes", "no"]).round(3).values.tolist()
[[0.667, 0.333]]
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.core.defaults import ANALYSIS_SEED, SURVEY_BOOTSTRAP_DRAWS
from pvsst.core.errors import InputError
from pvsst.core.validation import checked_weights
from pvsst.personas.cells import cell_codes, cell_id_of


def _answered(survey: pd.DataFrame, question: str, options, geography: str | None,
              weight: str | None) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Rows that answered ``question``, their option index and their weight; InputError on bad columns."""
    for column, field in ((question, "question"), (geography, "geography"), (weight, "weight")):
        if column is not None and column not in survey.columns:
            raise InputError("survey", field, f"no column {column!r} in the survey table")
    options = [str(o) for o in options]
    raw = survey[question]
    answered = raw.notna().to_numpy()
    codes = raw[answered].astype(str)
    unknown = sorted(set(codes.unique()) - set(options))
    if unknown:
        raise InputError("survey", question, f"answer codes {', '.join(unknown[:5])} are not options "
                         f"({', '.join(options)})")
    rows = survey[answered]
    option = codes.map({o: i for i, o in enumerate(options)}).to_numpy(dtype=np.int64)
    if weight is None:
        mass = np.ones(len(rows))
    else:
        mass = checked_weights(rows[weight], "survey", "weight", weight)
    if geography is not None and rows[geography].isna().any():
        raise InputError("survey", "geography", f"{int(rows[geography].isna().sum())} respondent(s) have no "
                         f"{geography!r}")
    return rows, option, mass


def state_shares(survey: pd.DataFrame, question: str, options, geography: str = "state",
                 weight: str | None = None) -> pd.DataFrame:
    """(state x option) weighted answer shares of the respondents who answered (states sorted).

    Examples
    --------
    >>> survey = pd.DataFrame({"state": ["OH", "TX", "TX"], "q": ["a", "a", "b"], "w": [1.0, 1.0, 3.0]})
    >>> state_shares(survey, "q", ["a", "b"], weight="w").values.tolist()
    [[1.0, 0.0], [0.25, 0.75]]
    """
    rows, option, mass = _answered(survey, question, options, geography, weight)
    states, state = np.unique(rows[geography].astype(str).to_numpy(), return_inverse=True)
    k = len(options)
    table = np.bincount(state * k + option, weights=mass, minlength=len(states) * k).reshape(len(states), k)
    return pd.DataFrame(table / table.sum(axis=1, keepdims=True), index=pd.Index(states, name=geography),
                        columns=[str(o) for o in options])


def national_shares(survey: pd.DataFrame, question: str, options, weight: str | None = None) -> np.ndarray:
    """(K,) weighted national answer shares (the national marginal).

    Examples
    --------
    >>> national_shares(pd.DataFrame({"q": ["a", "a", "b", None]}), "q", ["a", "b"]).round(3).tolist()
    [0.667, 0.333]
    """
    _, option, mass = _answered(survey, question, options, None, weight)
    counts = np.bincount(option, weights=mass, minlength=len(options))
    return counts / counts.sum()


def state_bootstrap(survey: pd.DataFrame, question: str, options, geography: str = "state",
                    weight: str | None = None, draws: int = SURVEY_BOOTSTRAP_DRAWS,
                    seed: int = ANALYSIS_SEED) -> tuple[list[str], np.ndarray]:
    """States and (draws + 1, G, K) bootstrap shares: respondents resampled within each state, with weights.

    Examples
    --------
    >>> survey = pd.DataFrame({"state": ["OH"] * 4 + ["TX"] * 2, "q": ["a", "b", "a", "a", "b", "b"]})
    >>> states, shares = state_bootstrap(survey, "q", ["a", "b"], draws=50)
    >>> states, shares.shape, shares[0].tolist(), bool((shares[:, 1, 1] == 1).all())
    (['OH', 'TX'], (51, 2, 2), [[0.75, 0.25], [0.0, 1.0]], True)
    """
    if draws < 1:
        raise InputError("survey", "bootstrap_draws", f"must be at least 1, got {draws}")
    rows, option, mass = _answered(survey, question, options, geography, weight)
    states, state = np.unique(rows[geography].astype(str).to_numpy(), return_inverse=True)
    k = len(options)
    rng = np.random.default_rng(seed)
    out = np.empty((draws + 1, len(states), k))
    for g in range(len(states)):
        members = np.flatnonzero(state == g)
        index = np.vstack([np.arange(members.size)[None, :],
                           rng.integers(0, members.size, size=(draws, members.size))])
        flat = (np.arange(draws + 1)[:, None] * k + option[members][index]).ravel()
        table = np.bincount(flat, weights=mass[members][index].ravel(), minlength=(draws + 1) * k).reshape(-1, k)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, g, :] = table / table.sum(axis=1, keepdims=True)
    return [str(s) for s in states], out


def state_noise(states, replicates: np.ndarray, options, ci_level: float = 0.95) -> pd.DataFrame:
    """Per state x option: ``share`` (observed), ``se`` (bootstrap standard deviation), ``ci_low``, ``ci_high``.

    Examples
    --------
    >>> survey = pd.DataFrame({"state": ["OH"] * 4, "q": ["a", "b", "a", "a"]})
    >>> noise = state_noise(*state_bootstrap(survey, "q", ["a", "b"], draws=200), ["a", "b"])
    >>> noise.loc[0, "state"], noise.loc[0, "option"], float(noise.loc[0, "share"]), bool(noise.loc[0, "se"] > 0)
    ('OH', 'a', 0.75, True)
    """
    tail = 100 * (1 - ci_level) / 2
    low, high = np.nanpercentile(replicates[1:], [tail, 100 - tail], axis=0)
    options = [str(o) for o in options]
    return pd.DataFrame({"state": np.repeat(list(states), len(options)), "option": np.tile(options, len(states)),
                         "share": replicates[0].ravel(), "se": np.nanstd(replicates[1:], axis=0, ddof=1).ravel(),
                         "ci_low": low.ravel(), "ci_high": high.ravel(), "ci_level": ci_level})


def indistinguishable_states(states, replicates: np.ndarray, options, ci_level: float = 0.95) -> pd.DataFrame:
    """Every state pair x option with the bootstrap interval of the share difference (a - b) and its p.

    ``distinguishable`` is False when that interval contains 0: the survey cannot tell the two states
    apart on that option. ``p`` is the two-sided bootstrap p of the difference,
    min(1, 2 min(#{d* <= 0} + 1, #{d* >= 0} + 1) / (B + 1)) over the B replicates d* (Davison and
    Hinkley 1997, section 4.4), for a multiplicity adjustment across pairs. (The states' resamples are
    independent, so the difference's replicates are the differences of the replicates.)

    Examples
    --------
    >>> survey = pd.DataFrame({"state": ["A"] * 50 + ["B"] * 50 + ["C"] * 50,
    ...                        "q": ["y"] * 45 + ["n"] * 5 + ["y"] * 5 + ["n"] * 45 + ["y"] * 44 + ["n"] * 6})
    >>> pairs = indistinguishable_states(*state_bootstrap(survey, "q", ["y", "n"], draws=400), ["y", "n"])
    >>> pairs[pairs["option"] == "y"][["state_a", "state_b", "distinguishable"]].values.tolist()
    [['A', 'B', True], ['A', 'C', False], ['B', 'C', True]]
    """
    states = list(states)
    a, b = np.triu_indices(len(states), k=1)
    difference = replicates[:, a, :] - replicates[:, b, :]                   # (draws + 1, pairs, K)
    tail = 100 * (1 - ci_level) / 2
    low, high = np.nanpercentile(difference[1:], [tail, 100 - tail], axis=0)
    valid = (~np.isnan(difference[1:])).sum(axis=0)
    below, above = (difference[1:] <= 0).sum(axis=0), (difference[1:] >= 0).sum(axis=0)
    p = np.minimum(1.0, 2 * (np.minimum(below, above) + 1) / (valid + 1))
    options = [str(o) for o in options]
    k = len(options)
    return pd.DataFrame({"state_a": np.repeat(np.asarray(states)[a], k), "state_b": np.repeat(np.asarray(states)[b], k),
                         "option": np.tile(options, len(a)), "difference": difference[0].ravel(),
                         "ci_low": low.ravel(), "ci_high": high.ravel(),
                         "distinguishable": ((low > 0) | (high < 0)).ravel(), "p": p.ravel(), "ci_level": ci_level})


def survey_cell_answers(survey: pd.DataFrame, attributes, question: str, options,
                        weight: str | None = None) -> pd.DataFrame:
    """Each cell's (weighted) answer distribution among the respondents who answered ``question``.

    Columns: ``cell_id, question, option, probability, respondents`` (respondents in the cell), for cells
    with at least one respondent; ids from :func:`pvsst.personas.cells.cell_id_of` over ``attributes``.

    Examples
    --------
    >>> survey = pd.DataFrame({"sex": ["f", "f", "m"], "q": ["a", "b", "b"]})
    >>> survey_cell_answers(survey, ["sex"], "q", ["a", "b"])[["option", "probability", "respondents"]].values.tolist()
    [['a', 0.5, 2], ['b', 0.5, 2], ['a', 0.0, 1], ['b', 1.0, 1]]
    """
    rows, option, mass = _answered(survey, question, options, None, weight)
    index, cells = cell_codes(rows, attributes, "survey")
    attributes = list(cells.columns)
    ids = [cell_id_of(dict(zip(attributes, values))) for values in cells.itertuples(index=False, name=None)]
    k = len(options)
    table = np.bincount(index * k + option, weights=mass, minlength=len(ids) * k).reshape(len(ids), k)
    total = table.sum(axis=1, keepdims=True)
    # A cell whose respondents all have weight 0 carries no distribution: it counts as uncovered.
    keep = total[:, 0] > 0
    share = table[keep] / total[keep]
    respondents = np.bincount(index, minlength=len(ids))[keep]
    ids = np.asarray(ids)[keep]
    return pd.DataFrame({"cell_id": np.repeat(ids, k), "question": question,
                         "option": np.tile([str(o) for o in options], len(ids)), "probability": share.ravel(),
                         "respondents": np.repeat(respondents, k)})
