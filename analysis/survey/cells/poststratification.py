"""Post-stratified population estimates from cell answer distributions (national, per geography, per group).

The population is split into cells (:mod:`pvsst.personas.cells`); ``N_dc`` is the population of cell c in
domain d (a geography such as a state, a group such as ``party=Democrat``, or the whole population).
With ``p_c`` the answer distribution of cell c, the post-stratified estimate for domain d is

    estimate_d = sum_c N_dc / N_d * p_c,        N_d = sum_c N_dc

(Little 1993, "Post-stratification: a modeler's perspective", JASA 88:1001-1012; Park, Gelman &
Bafumi 2004 for its use in small-area opinion estimates). Because every member of a cell receives the
identical prompt, p_c is each member's distribution and the estimate equals the mean of the members'
distributions: cell answering is exact, not an approximation.

Uncertainty:

- ``count`` answers (k sampled answers per cell x question): percentile bootstrap over the cells'
  draws. Each draw resamples every cell's own k answers with replacement (the counts of such a resample
  are Multinomial(k, p_hat_c), drawn directly) and recomputes every estimate; ``interval`` is
  ``bootstrap``.
- ``probability`` answers (logprobs or verbalized distributions, one per cell x question): there is no
  sampling of answers; ``ci_low = ci_high = estimate`` and ``interval`` is ``exact``.

The census counts carry no sampling error here (a population, not a sample).

Output (:func:`population_estimates`, written to ``analysis/estimates.csv``), one row per key x question x
domain x option; columns :data:`ESTIMATE_COLUMNS` after the answers' key columns (e.g. model, condition):

question, option
level: ``national``, ``geography`` (one row per level of the geography column) or ``group``.
domain: ``all``, the geography level (e.g. ``OH``), or ``attribute=value`` for a group.
estimate: the post-stratified share of the option; ci_low, ci_high: its percentile interval.
interval: ``bootstrap`` or ``exact``.
population: N_d; n_cells: cells with N_dc > 0.
cell_draws: the fewest answers any of the domain's cells has (k; NaN for exact).
bootstrap_draws, bootstrap_seed, ci_level: the settings used (bootstrap rows; NaN for exact).

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

import hashlib

import numpy as np
import pandas as pd

from pvsst.core.defaults import ANALYSIS_SEED, SURVEY_BOOTSTRAP_DRAWS
from pvsst.core.errors import InputError
from pvsst.analysis.stats.paired import require_columns

ESTIMATE_COLUMNS = ("question", "level", "domain", "option", "estimate", "ci_low", "ci_high", "interval",
                    "population", "n_cells", "cell_draws", "bootstrap_draws", "bootstrap_seed", "ci_level")
ANSWER_COLUMNS = ("cell_id", "question", "option")


def poststratify(counts: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Post-stratified estimates: (D, C) domain x cell counts and (..., C, K) cell distributions -> (..., D, K).

    Parameters
    ----------
    counts : numpy.ndarray
        (D, C) population ``N_dc`` of cell ``c`` in domain ``d``.
    p : numpy.ndarray
        (..., C, K) answer distributions of the cells (leading axes: bootstrap draws).

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


def resample_cells(counts: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """(draws + 1, C, K) cell shares: row 0 observed, then each cell's k answers resampled with replacement.

    Parameters
    ----------
    counts : numpy.ndarray
        (C, K) sampled answer counts per cell.
    draws : int
        Number of resamples.
    rng : numpy.random.Generator
        The generator; a resampled cell's counts are ``Multinomial(k_c, p_hat_c)``, drawn directly.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> shares = resample_cells(np.array([[3, 1], [0, 4]]), 200, np.random.default_rng(0))
    >>> shares.shape, shares[0].tolist(), bool((shares[:, 1, 1] == 1).all())
    ((201, 2, 2), [[0.75, 0.25], [0.0, 1.0]], True)
    """
    counts = np.asarray(counts, dtype=float)
    k = counts.sum(axis=1)
    observed = counts / k[:, None]
    resampled = rng.multinomial(k.astype(np.int64), observed, size=(draws, len(k)))
    return np.concatenate([observed[None], resampled / k[None, :, None]], axis=0)


def _stream(seed: int, *labels) -> np.random.Generator:
    """A generator for one (key, question): the master seed and a hash of the labels, order-free."""
    digest = hashlib.sha256("\x1f".join(map(str, labels)).encode("utf-8")).digest()
    return np.random.default_rng([int(seed), int.from_bytes(digest[:8], "little")])


def _options(answers: pd.DataFrame, question: str, options: dict | None) -> list[str]:
    if options and question in options:
        return [str(o) for o in options[question]]
    return list(dict.fromkeys(answers["option"].astype(str)))


def population_estimates(answers: pd.DataFrame, counts: pd.DataFrame, cells: pd.DataFrame, *, groups=(),
                         geography: str | None = None, options: dict | None = None,
                         bootstrap_draws: int = SURVEY_BOOTSTRAP_DRAWS, bootstrap_seed: int = ANALYSIS_SEED,
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
    bootstrap_draws, bootstrap_seed : int
        The percentile bootstrap of sampled answers.
    ci_level : float
        The interval's coverage.

    Returns
    -------
    pandas.DataFrame
        The key columns, then :data:`ESTIMATE_COLUMNS`, one row per key x question x domain x option.

    Notes
    -----
    ``estimate_d = sum_c N_dc / N_d * p_c`` (:func:`poststratify`). Sampled answers: every bootstrap
    draw resamples each cell's own k answers (``Multinomial(k_c, p_hat_c)``) and the interval is the
    percentile interval of the draws' estimates; distributions: no sampling, so
    ``ci_low = ci_high = estimate`` (``interval = exact``). The census counts are a population and carry
    no sampling error here.

    References
    ----------
    .. [1] R. J. A. Little, "Post-stratification: a modeler's perspective", Journal of the American
       Statistical Association 88(423), 1001-1012, 1993.
    .. [2] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993.

    Examples
    --------
    >>> cells = pd.DataFrame({"cell_id": ["a", "b"], "sex": ["female", "male"]})
    >>> counts = pd.DataFrame({"cell_id": ["a", "b"], "state": ["OH", "OH"], "count": [3, 1]})
    >>> answers = pd.DataFrame({"cell_id": ["a", "a", "b"], "question": "q", "option": ["yes", "no", "no"],
    ...                         "count": [15, 5, 20]})
    >>> row = population_estimates(answers, counts, cells, bootstrap_draws=500).iloc[0]
    >>> float(row["estimate"]), row["interval"], bool(row["ci_low"] < 0.5625 < row["ci_high"])
    (0.5625, 'bootstrap', True)
    """
    require_columns(answers, ANSWER_COLUMNS, "answers")
    if bootstrap_draws < 1:
        raise InputError("estimates", "bootstrap_draws", f"must be at least 1, got {bootstrap_draws}")
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
                draws_used = np.full(len(labels), np.nan)
            else:
                rng = _stream(bootstrap_seed, *key, question)
                replicates = poststratify(sub, resample_cells(masses, bootstrap_draws, rng))
                estimate = replicates[0]
                tail = 100 * (1 - ci_level) / 2
                low, high = np.percentile(replicates[1:], [tail, 100 - tail], axis=0)
                k = masses.sum(axis=1)
                draws_used = np.array([k[row > 0].min() if (row > 0).any() else np.nan for row in sub])
            frame = pd.DataFrame({
                "question": str(question),
                "level": np.repeat(labels["level"].to_numpy(), len(opts)),
                "domain": np.repeat(labels["domain"].to_numpy(), len(opts)),
                "option": np.tile(opts, len(labels)),
                "estimate": estimate.ravel(), "ci_low": np.asarray(low).ravel(), "ci_high": np.asarray(high).ravel(),
                "interval": "exact" if kind == "probability" else "bootstrap",
                "population": np.repeat(sub.sum(axis=1), len(opts)),
                "n_cells": np.repeat((sub > 0).sum(axis=1), len(opts)),
                "cell_draws": np.repeat(draws_used, len(opts)),
                "bootstrap_draws": np.nan if kind == "probability" else bootstrap_draws,
                "bootstrap_seed": np.nan if kind == "probability" else bootstrap_seed,
                "ci_level": np.nan if kind == "probability" else ci_level,
            })
            for name, value in reversed(list(zip(keys, key))):
                frame.insert(0, name, value)
            frames.append(frame)
    return pd.concat(frames, ignore_index=True)[keys + list(ESTIMATE_COLUMNS)]
