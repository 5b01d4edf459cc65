"""Post-stratified population estimates from cell answer distributions (national, per geography, per group).

The population is split into cells (:mod:`pvsst.personas.cells`); ``N_dc`` is the population of cell c in
domain d (a geography such as a state, a group such as ``party=Democrat``, or the whole population).
With ``p_c`` the answer distribution of cell c, the post-stratified estimate for domain d is

    estimate_d = sum_c N_dc / N_d * p_c,        N_d = sum_c N_dc

(Little 1993, "Post-stratification: a modeler's perspective", JASA 88:1001-1012; Park, Gelman &
Bafumi 2004 for its use in small-area opinion estimates). Because every member of a cell receives the
identical prompt, p_c is each member's distribution and the estimate equals the mean of the members'
distributions: cell answering is exact, not an approximation.

Uncertainty (``count`` answers: k sampled answers per cell x question). The estimand is the population
share of the model's answer distribution, ``sum_c w_dc p_c`` with ``w_dc = N_dc / N_d``; each cell's
``p_hat_c`` is the share of its ``k_c`` draws, so the estimate's sampling variance is

    V_d = sum_c w_dc^2 p_c (1 - p_c) / k_c.

Cells with ``k_c >= 2`` contribute their unbiased estimate ``k_c / (k_c - 1) p_hat_c (1 - p_hat_c) / k_c``.
Cells with one draw cannot estimate their own variance, so theirs are pooled: with ``A = sum w_dc^2`` over
them and ``p_tilde`` the ``w_dc^2``-weighted mean of their answers, they contribute
``A p_tilde (1 - p_tilde) / (1 - sum v_c^2)`` (``v_c = w_dc^2 / A``), which bounds
``sum w_dc^2 p_c (1 - p_c)`` from above in expectation (concavity; equal when the cells' shares are equal),
and ``A / 4`` when a single one-draw cell carries the domain. The interval is Wilson's score interval at
the effective number of answers ``n_eff = p_hat (1 - p_hat) / V_d`` (Kish's ``1 / sum_c w_dc^2 / k_c``
when ``p_hat`` is 0 or 1); ``interval`` is ``wilson``. A cell is never resampled from its own estimate: with
``k = 1`` that gives a zero-width interval.

``probability`` answers (logprobs or verbalized distributions, one per cell x question): the model's
distribution is read, not sampled, so the estimate is the estimand itself; ``ci_low = ci_high = estimate``
and ``interval`` is ``exact``. The census counts carry no sampling error here (a population, not a sample).

Output (:func:`population_estimates`, written to ``analysis/estimates.csv``), one row per key x question x
domain x option; columns :data:`ESTIMATE_COLUMNS` after the answers' key columns (e.g. model, condition):

question, option
level: ``national``, ``geography`` (one row per level of the geography column) or ``group``.
domain: ``all``, the geography level (e.g. ``OH``), or ``attribute=value`` for a group.
estimate: the post-stratified share of the option; ci_low, ci_high: its interval.
interval: ``wilson`` or ``exact``.
population: N_d; n_cells: cells with N_dc > 0.
cell_draws: the fewest answers any of the domain's cells has (k; NaN for exact).
effective_n: the effective number of answers of the Wilson interval (NaN for exact).
ci_level: the interval's level (NaN for exact).

Examples
--------
>>> import pandas as pd
>>> cells = pd.DataFrame({"cell_id": ["a", "b"], "sex": ["female", "male"]})
>>> counts = pd.DataFrame({"cell_id": ["a", "b", "a"], "state": ["OH", "OH", "TX"], "count": [3, 1, 2]})
>>> answers = pd.DataFrame({"cell_id": ["a", "a", "b", "b"], "question": "q", "option": ["yes", "no"] * 2,
...                         "probability": [0.8, 0.2, 0.4, 0.6]})
>>> table = population_estimates(answers, counts, cells)
>>> table[table["option"] == "yes"][["level", "domain", "estimate", "interval"]].round(4).values.tolist()
[['national', 'all', 0.7333, 'exact'], ['geography', 'OH', 0.7, 'exact'], ['geography', 'TX', 0.8, 'exact']]
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from pvsst.analysis.stats.paired import require_columns
from pvsst.core.errors import InputError

ESTIMATE_COLUMNS = ("question", "level", "domain", "option", "estimate", "ci_low", "ci_high", "interval",
                    "population", "n_cells", "cell_draws", "effective_n", "ci_level")
ANSWER_COLUMNS = ("cell_id", "question", "option")


def poststratify(counts: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Post-stratified estimates: (D, C) domain x cell counts and (..., C, K) cell distributions -> (..., D, K).

    Parameters
    ----------
    counts : numpy.ndarray
        (D, C) population ``N_dc`` of cell ``c`` in domain ``d``.
    p : numpy.ndarray
        (..., C, K) answer distributions of the cells (leading axes: replicates, if any).

    Returns
    -------
    numpy.ndarray
        (..., D, K) estimates; a domain with no population gives NaN.

    Notes
    -----
    ``estimate_d = sum_c N_dc / N_d * p_c`` with ``N_d = sum_c N_dc``.

    References
    ----------
    .. [1] R. J. A. Little, "Post-stratification: a modeler's perspective", Journal of the American
       Statistical Association 88(423), 1001-1012, 1993.
    .. [2] D. K. Park, A. Gelman and J. Bafumi, "Bayesian multilevel estimation with poststratification:
       state-level estimates from national polls", Political Analysis 12(4), 375-385, 2004.

    Examples
    --------
    >>> counts = np.array([[3, 1], [0, 2]])
    >>> p = np.array([[0.8, 0.2], [0.4, 0.6]])
    >>> poststratify(counts, p).round(3).tolist()
    [[0.7, 0.3], [0.4, 0.6]]
    """
    counts = np.asarray(counts, dtype=float)
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, counts / np.where(total > 0, total, 1.0), np.nan)
    return share @ np.asarray(p, dtype=float)


def domain_counts(counts: pd.DataFrame, cells: pd.DataFrame, cell_ids, groups=(),
                  geography: str | None = None) -> tuple[pd.DataFrame, np.ndarray]:
    """Domains and their (D, C) cell counts: national, each geography level, each level of each group.

    Parameters
    ----------
    counts : pandas.DataFrame
        ``cell_id``, the geography column and ``count`` (a :class:`pvsst.personas.cells.CellTable`'s
        ``counts``).
    cells : pandas.DataFrame
        ``cell_id`` and the cell attributes (its ``cells``).
    cell_ids : sequence
        The column order of the matrix.
    groups : sequence of str
        Cell attributes to estimate by.
    geography : str, optional
        The geography column (default: the one column besides ``cell_id`` and ``count``).

    Returns
    -------
    tuple
        The (level, domain) labels (DataFrame) and the (D, C) matrix.

    Examples
    --------
    >>> cells = pd.DataFrame({"cell_id": ["a", "b"], "sex": ["female", "male"]})
    >>> counts = pd.DataFrame({"cell_id": ["a", "b", "a"], "state": ["OH", "OH", "TX"], "count": [3, 1, 2]})
    >>> labels, matrix = domain_counts(counts, cells, ["a", "b"], groups=["sex"])
    >>> labels["domain"].tolist(), matrix.tolist()
    (['all', 'OH', 'TX', 'sex=female', 'sex=male'], [[5.0, 1.0], [3.0, 1.0], [2.0, 0.0], [5.0, 0.0], [0.0, 1.0]])
    """
    cell_ids = [str(c) for c in cell_ids]
    require_columns(counts, ("cell_id", "count"), "cell counts")
    if geography is None:
        extra = [c for c in counts.columns if c not in ("cell_id", "count")]
        if len(extra) != 1:
            raise InputError("cell counts", "geography", f"expected one geography column besides cell_id and count, "
                             f"got {extra}")
        geography = extra[0]
    elif geography not in counts.columns:
        raise InputError("cell counts", "geography", f"no column {geography!r}")
    position = {c: i for i, c in enumerate(cell_ids)}
    col = counts["cell_id"].astype(str).map(position)
    if col.isna().any():
        raise InputError("cell counts", "cell_id", f"cell {counts['cell_id'][col.isna()].iloc[0]!r} has population "
                         "but no answers")
    geo = counts[geography].astype(str)
    levels = _ordered_levels(counts[geography])
    geo_matrix = np.zeros((len(levels), len(cell_ids)))
    np.add.at(geo_matrix, (geo.map({g: i for i, g in enumerate(levels)}).to_numpy(), col.to_numpy(dtype=int)),
              counts["count"].to_numpy(dtype=float))
    national = geo_matrix.sum(axis=0)
    labels = [("national", "all")] + [("geography", g) for g in levels]
    rows = [national[None, :], geo_matrix]
    by_cell = cells.assign(cell_id=cells["cell_id"].astype(str)).set_index("cell_id")
    for group in groups:
        if group not in by_cell.columns:
            raise InputError("estimates", "groups", f"{group!r} is not a cell attribute (cells: "
                             f"{', '.join(map(str, by_cell.columns))})")
        values = by_cell[group].reindex(cell_ids).astype(str).to_numpy()
        for level in _ordered_levels(by_cell[group]):
            labels.append(("group", f"{group}={level}"))
            rows.append((national * (values == level))[None, :])
    return pd.DataFrame(labels, columns=["level", "domain"]), np.vstack(rows)


def _ordered_levels(column: pd.Series) -> list[str]:
    """The levels present in a column as strings: category order for categoricals, else sorted."""
    present = set(column.dropna().astype(str))
    if isinstance(column.dtype, pd.CategoricalDtype):
        return [str(c) for c in column.cat.categories if str(c) in present]
    return sorted(present)


def cell_distributions(answers: pd.DataFrame, cell_ids, options) -> tuple[np.ndarray, str]:
    """(C, K) answer masses of one question's cells in ``cell_ids`` x ``options`` order, and their kind.

    Parameters
    ----------
    answers : pandas.DataFrame
        ``cell_id``, ``option`` and exactly one of ``count`` (k sampled answers per cell) or
        ``probability`` (one distribution per cell).
    cell_ids : sequence
        The cells, in row order.
    options : sequence
        The options, in column order (answers with other options are left out).

    Returns
    -------
    tuple
        The (C, K) masses and the kind, ``count`` or ``probability``.

    Raises
    ------
    InputError
        Neither or both mass columns, a negative or missing mass, a cell without answers, or a
        fractional count.

    Examples
    --------
    >>> answers = pd.DataFrame({"cell_id": ["a", "a", "b"], "option": ["yes", "no", "no"], "count": [2, 1, 3]})
    >>> masses, kind = cell_distributions(answers, ["a", "b"], ["yes", "no"])
    >>> masses.tolist(), kind
    ([[2.0, 1.0], [0.0, 3.0]], 'count')
    """
    kinds = [c for c in ("count", "probability") if c in answers.columns]
    if len(kinds) != 1:
        raise InputError("answers", "count", "need exactly one of the columns count (sampled answers) "
                         "or probability (distributions)")
    kind = kinds[0]
    values = answers[kind].to_numpy(dtype=float)
    if np.isnan(values).any() or (values < 0).any():
        raise InputError("answers", kind, "must hold non-negative numbers")
    row = answers["cell_id"].astype(str).map({c: i for i, c in enumerate(map(str, cell_ids))})
    col = answers["option"].astype(str).map({o: i for i, o in enumerate(map(str, options))})
    keep = row.notna() & col.notna()
    masses = np.zeros((len(cell_ids), len(options)))
    np.add.at(masses, (row[keep].to_numpy(dtype=int), col[keep].to_numpy(dtype=int)), values[keep.to_numpy()])
    empty = masses.sum(axis=1) <= 0
    if empty.any():
        raise InputError("answers", "cell_id", f"cell {list(cell_ids)[int(np.argmax(empty))]!r} has population "
                         "but no answers")
    if kind == "count" and not np.allclose(masses, np.round(masses)):
        raise InputError("answers", "count", "sampled answer counts must be whole numbers")
    return masses, kind


def sampled_variance(domains: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(D, K) sampling variance of post-stratified shares estimated from each cell's k sampled answers.

    Parameters
    ----------
    domains : numpy.ndarray
        (D, C) population ``N_dc`` of cell ``c`` in domain ``d``.
    counts : numpy.ndarray
        (C, K) sampled answer counts per cell (``k_c`` = the row sum, at least 1).

    Returns
    -------
    numpy.ndarray
        (D, K) estimated variance of each domain's share of each option (NaN for an empty domain).

    Notes
    -----
    ``V_d = sum_c w_dc^2 p_c (1 - p_c) / k_c`` with ``w_dc = N_dc / N_d``. Cells with ``k_c >= 2``:
    ``p_c (1 - p_c)`` estimated by ``k_c / (k_c - 1) p_hat_c (1 - p_hat_c)`` (unbiased). Cells with
    ``k_c = 1``: pooled, ``A p_tilde (1 - p_tilde) / (1 - sum_c v_c^2)`` with ``A = sum w_dc^2``,
    ``v_c = w_dc^2 / A`` and ``p_tilde = sum_c v_c p_hat_c`` (an upper bound in expectation, by
    concavity of ``p (1 - p)``); ``A / 4`` when one such cell carries all of ``A``.

    References
    ----------
    .. [1] W. G. Cochran, *Sampling Techniques*, 3rd ed., Wiley, 1977, section 5A.9 (variance of a
       post-stratified mean with known stratum sizes).

    Examples
    --------
    >>> sampled_variance(np.array([[1, 1]]), np.array([[1, 1], [2, 0]])).tolist()  # two draws each
    [[0.0625, 0.0625]]
    >>> sampled_variance(np.array([[1, 1]]), np.array([[1, 0], [0, 1]])).tolist()  # one draw each: pooled
    [[0.25, 0.25]]
    """
    domains = np.asarray(domains, dtype=float)
    counts = np.asarray(counts, dtype=float)
    k = counts.sum(axis=1)
    p = counts / k[:, None]
    total = domains.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        w2 = np.where(total > 0, (domains / np.where(total > 0, total, 1.0)) ** 2, np.nan)  # (D, C)
    many = k >= 2
    spread = np.zeros_like(p)
    spread[many] = (p * (1 - p))[many] / (k[many] - 1)[:, None]          # k/(k-1) p(1-p) / k
    variance = w2[:, many] @ spread[many]
    one = ~many
    if one.any():
        a = w2[:, one].sum(axis=1)                                       # (D,)
        with np.errstate(invalid="ignore", divide="ignore"):
            v = w2[:, one] / np.where(a > 0, a, 1.0)[:, None]
            p_tilde = v @ p[one]                                         # (D, K)
            concentration = (v ** 2).sum(axis=1)
            pooled = np.where((concentration < 1 - 1e-12)[:, None],
                              a[:, None] * p_tilde * (1 - p_tilde) / (1 - concentration)[:, None],
                              a[:, None] / 4.0)
        variance = variance + np.where((a > 0)[:, None], pooled, 0.0)
    return variance


def wilson_interval(estimate: np.ndarray, n_eff: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval of a share at an effective number of answers.

    Parameters
    ----------
    estimate : numpy.ndarray
        The shares.
    n_eff : numpy.ndarray
        Effective numbers of answers (same shape).
    level : float
        The coverage.

    Returns
    -------
    tuple
        ``(low, high)`` arrays.

    Notes
    -----
    With ``z`` the normal quantile: centre ``(p + z^2 / 2n) / (1 + z^2 / n)``, half width
    ``z / (1 + z^2 / n) sqrt(p (1 - p) / n + z^2 / 4n^2)``.

    References
    ----------
    .. [1] E. B. Wilson, "Probable inference, the law of succession, and statistical inference", Journal
       of the American Statistical Association 22(158), 209-212, 1927.
    .. [2] E. L. Korn and B. I. Graubard, "Confidence intervals for proportions with small expected number
       of positive counts estimated from survey data", Survey Methodology 24(2), 193-201, 1998.

    Examples
    --------
    >>> low, high = wilson_interval(np.array([0.5]), np.array([100.0]))
    >>> round(float(low[0]), 4), round(float(high[0]), 4)
    (0.4038, 0.5962)
    """
    p = np.asarray(estimate, dtype=float)
    n = np.asarray(n_eff, dtype=float)
    z = norm.ppf(0.5 + level / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        centre = (p + z ** 2 / (2 * n)) / (1 + z ** 2 / n)
        half = z / (1 + z ** 2 / n) * np.sqrt(np.clip(p * (1 - p), 0, None) / n + z ** 2 / (4 * n ** 2))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def effective_answers(domains: np.ndarray, counts: np.ndarray, estimate: np.ndarray,
                      variance: np.ndarray) -> np.ndarray:
    """(D, K) effective numbers of answers: ``p_hat (1 - p_hat) / V``, or Kish's ``1 / sum_c w_dc^2 / k_c``
    where ``p_hat`` is 0 or 1 (or ``V`` is 0).

    Parameters
    ----------
    domains : numpy.ndarray
        (D, C) population counts.
    counts : numpy.ndarray
        (C, K) sampled answer counts per cell.
    estimate, variance : numpy.ndarray
        (D, K) shares and their variances (:func:`sampled_variance`).

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> effective_answers(np.array([[1, 1]]), np.array([[1, 0], [1, 0]]), np.array([[1.0, 0.0]]),
    ...                   np.array([[0.0, 0.0]])).tolist()
    [[2.0, 2.0]]
    """
    domains = np.asarray(domains, dtype=float)
    k = np.asarray(counts, dtype=float).sum(axis=1)
    total = domains.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        kish = 1.0 / ((domains / total) ** 2 / k[None, :]).sum(axis=1)
        ratio = estimate * (1 - estimate) / variance
    usable = (variance > 0) & (estimate > 0) & (estimate < 1)
    return np.where(usable, ratio, kish[:, None])


def _options(answers: pd.DataFrame, question: str, options: dict | None) -> list[str]:
    if options and question in options:
        return [str(o) for o in options[question]]
    return list(dict.fromkeys(answers["option"].astype(str)))


def population_estimates(answers: pd.DataFrame, counts: pd.DataFrame, cells: pd.DataFrame, *, groups=(),
                         geography: str | None = None, options: dict | None = None,
                         ci_level: float = 0.95) -> pd.DataFrame:
    """Post-stratified estimates of every key x question for the nation, each geography and each group.

    Parameters
    ----------
    answers : pandas.DataFrame
        The decision bank: ``cell_id, question, option`` and either ``count`` (sampled answers) or
        ``probability`` (distributions); every other column is a key (model, condition, ...).
    counts, cells : pandas.DataFrame
        The population's cell counts per geography and the cell attributes
        (:class:`pvsst.personas.cells.CellTable` ``counts`` and ``cells``).
    groups : sequence of str
        Cell attributes to estimate by (e.g. ``["party"]``).
    geography : str, optional
        The geography column of ``counts``.
    options : dict, optional
        ``{question: [option, ...]}`` to fix the option order (default: order of first appearance).
    ci_level : float
        The interval's coverage.

    Returns
    -------
    pandas.DataFrame
        The key columns, then :data:`ESTIMATE_COLUMNS`, one row per key x question x domain x option.

    Notes
    -----
    ``estimate_d = sum_c N_dc / N_d * p_c`` (:func:`poststratify`). Sampled answers: Wilson's interval at
    the effective number of answers (:func:`effective_answers`) from the variance of the cells' k draws
    (:func:`sampled_variance`); distributions: no sampling, so ``ci_low = ci_high = estimate``
    (``interval = exact``). The census counts are a population and carry no sampling error here.

    References
    ----------
    .. [1] R. J. A. Little, "Post-stratification: a modeler's perspective", Journal of the American
       Statistical Association 88(423), 1001-1012, 1993.
    .. [2] W. G. Cochran, *Sampling Techniques*, 3rd ed., Wiley, 1977, section 5A.9.

    Examples
    --------
    >>> cells = pd.DataFrame({"cell_id": ["a", "b"], "sex": ["female", "male"]})
    >>> counts = pd.DataFrame({"cell_id": ["a", "b"], "state": ["OH", "OH"], "count": [3, 1]})
    >>> answers = pd.DataFrame({"cell_id": ["a", "a", "b"], "question": "q", "option": ["yes", "no", "no"],
    ...                         "count": [15, 5, 20]})
    >>> row = population_estimates(answers, counts, cells).iloc[0]
    >>> float(row["estimate"]), row["interval"], bool(row["ci_low"] < 0.5625 < row["ci_high"])
    (0.5625, 'wilson', True)
    """
    require_columns(answers, ANSWER_COLUMNS, "answers")
    keys = [c for c in answers.columns if c not in ANSWER_COLUMNS + ("count", "probability")]
    cell_ids = list(cells["cell_id"].astype(str))
    labels, matrix = domain_counts(counts, cells, cell_ids, groups, geography)
    matrix_cells = matrix[0] > 0
    frames = []
    grouped = answers.groupby(keys, sort=False, dropna=False) if keys else [((), answers)]
    for key, part in grouped:
        key = key if isinstance(key, tuple) else (key,)
        for question, asked in part.groupby("question", sort=False):
            opts = _options(asked, str(question), options)
            populated = [c for c, on in zip(cell_ids, matrix_cells) if on]
            masses, kind = cell_distributions(asked, populated, opts)
            sub = matrix[:, matrix_cells]
            if kind == "probability":
                p = masses / masses.sum(axis=1, keepdims=True)
                estimate = poststratify(sub, p)
                low = high = estimate
                n_eff = np.full(estimate.shape, np.nan)
                draws_used = np.full(len(labels), np.nan)
            else:
                estimate = poststratify(sub, masses / masses.sum(axis=1, keepdims=True))
                n_eff = effective_answers(sub, masses, estimate, sampled_variance(sub, masses))
                low, high = wilson_interval(estimate, n_eff, ci_level)
                k = masses.sum(axis=1)
                draws_used = np.array([k[row > 0].min() if (row > 0).any() else np.nan for row in sub])
            frame = pd.DataFrame({
                "question": str(question),
                "level": np.repeat(labels["level"].to_numpy(), len(opts)),
                "domain": np.repeat(labels["domain"].to_numpy(), len(opts)),
                "option": np.tile(opts, len(labels)),
                "estimate": estimate.ravel(), "ci_low": np.asarray(low).ravel(), "ci_high": np.asarray(high).ravel(),
                "interval": "exact" if kind == "probability" else "wilson",
                "population": np.repeat(sub.sum(axis=1), len(opts)),
                "n_cells": np.repeat((sub > 0).sum(axis=1), len(opts)),
                "cell_draws": np.repeat(draws_used, len(opts)),
                "effective_n": n_eff.ravel(),
                "ci_level": np.nan if kind == "probability" else ci_level,
            })
            for name, value in reversed(list(zip(keys, key))):
                frame.insert(0, name, value)
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)[keys + list(ESTIMATE_COLUMNS)]
