"""Paired-block contrasts: a contrast's differences over complete blocks and its frozen result object.

A *block* is one combination of the block factors (PV-SST: model x topic_id x seed) that ran every arm;
a *contrast* ``NAME = treatment - baseline`` reduces each block to ``metric(treatment) - metric(baseline)``.
Blocks keep the order in which they first appear in the table: the bootstrap indexes into that order.
Blocks missing an arm of the contrast are excluded and reported, never dropped silently.

Examples
--------
>>> import pandas as pd
>>> table = pd.DataFrame({"model": ["m"] * 6, "topic_id": ["t"] * 6, "seed": [1, 1, 2, 2, 3, 3],
...                       "condition": ["likes", "control"] * 3, "y": [0.3, 0.1, 0.5, 0.2, 0.1, 0.2]})
>>> result = paired_block_contrast(table, Contrast("likes_minus_control", "likes", "control"), "y")
>>> result.n_blocks, result.positive, result.negative
(3, 2, 1)
>>> round(result.mean_difference, 6)
0.133333
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pvsst.analysis.stats.block_tests import bootstrap_mean_ci, sign_counts, sign_flip_p, sign_test_p
from pvsst.analysis.stats.plan import PVSST_BLOCK, Contrast, RandomizationPlan
from pvsst.core.defaults import ANALYSIS_SEED, BOOTSTRAP_DRAWS
from pvsst.core.errors import InputError

PUBLISHED_COLUMNS = ("contrast", "metric", "stratum_type", "stratum", "n_blocks", "mean_difference",
                     "median_difference", "ci95_low", "ci95_high", "positive", "negative", "ties",
                     "sign_test_p", "randomization_p")
SETTING_COLUMNS = ("randomization_method", "randomization_draws", "bootstrap_draws", "bootstrap_seed", "alpha")
"""The settings each row was computed with: the randomization method and number of sign patterns the
row's p is over, the bootstrap draws and seed, and the alpha of its ``1 - alpha`` interval."""
RESULT_COLUMNS = (*PUBLISHED_COLUMNS, *SETTING_COLUMNS)


class IncompleteBlocksWarning(UserWarning):
    """Some blocks lacked an arm of a contrast and were excluded from it (as preregistered)."""


@dataclass(frozen=True)
class BlockDifferences:
    """One contrast's per-block differences on one metric, plus the blocks it had to leave out.

    ``excluded`` has one row per excluded block: the block columns, ``contrast``, ``metric`` and
    ``reason`` (the missing arm, or a missing metric value).
    """

    contrast: Contrast
    metric: str
    blocks: pd.DataFrame  # block key columns (+ strata columns), in first-appearance order
    differences: np.ndarray
    excluded: pd.DataFrame


def require_arms(conditions: pd.Series, contrast: Contrast, source: str = "table") -> None:
    """``InputError`` unless both arms of ``contrast`` occur among ``conditions`` (one per trial).

    Parameters
    ----------
    conditions : pandas.Series
        The condition of each trial.
    contrast : Contrast
        The contrast whose treatment and control arms must occur.
    source : str
        The input's name in the error line.

    Returns
    -------
    None

    Raises
    ------
    InputError
        Naming the first missing arm and the conditions present.

    Examples
    --------
    >>> require_arms(pd.Series(["likes", "control"]), Contrast("e", "likes", "control"))
    >>> require_arms(pd.Series(["likes"]), Contrast("e", "likes", "control"))
    Traceback (most recent call last):
    ...
    pvsst.core.errors.InputError: table: contrast e: unknown arm 'control' (conditions in the table: likes)
    """
    for arm in (contrast.treatment, contrast.control):
        if not (conditions == arm).any():
            known = ", ".join(map(str, pd.unique(conditions)))
            raise InputError(source, f"contrast {contrast.name}",
                             f"unknown arm {arm!r} (conditions in the table: {known})")


def block_differences(table: pd.DataFrame, contrast: Contrast, metric: str, *,
                      block: Sequence[str] = PVSST_BLOCK, condition: str = "condition",
                      carry: Sequence[str] = (), source: str = "table") -> BlockDifferences:
    """Per-block ``metric(treatment) - metric(control)`` over the blocks that have both arms.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per trial: the ``block`` columns, ``condition``, ``metric`` and ``carry``.
    contrast : Contrast
        ``name = treatment - control``.
    metric : str
        The outcome column; booleans (or the strings True/False) count as 1/0.
    block : sequence of str
        The columns whose combination is a block (PV-SST: model, topic_id, seed).
    condition : str
        The arm column.
    carry : sequence of str
        Extra columns (such as strata) that must be constant within a block; kept beside the block keys.
    source : str
        The input's name in error lines.

    Returns
    -------
    BlockDifferences
        The kept blocks (first-appearance order), their differences and the excluded blocks with the
        reason (a missing arm or a missing value).

    Raises
    ------
    InputError
        A missing column, an unknown arm, two trials of one block and arm, or a carried column that
        varies within a block.

    Notes
    -----
    For each block ``b`` with both arms and both values, ``d_b = y_b(treatment) - y_b(control)``.

    References
    ----------
    .. [1] Usman and Williamson, "Peer-Voted LLM-Agent Stress Tests" (PV-SST), arXiv 2608.20438 (blocks
       of model x topic x seed, paired across arms).

    Examples
    --------
    >>> table = pd.DataFrame({"model": "m", "topic_id": "t", "seed": [1, 1, 2, 2, 3],
    ...                       "condition": ["a", "b", "a", "b", "a"], "y": [3.0, 1.0, 2.0, 1.5, 4.0]})
    >>> diffs = block_differences(table, Contrast("a_minus_b", "a", "b"), "y")
    >>> diffs.differences.tolist(), diffs.excluded[["seed", "reason"]].values.tolist()
    ([2.0, 0.5], [[3, 'missing arm b']])
    """
    block = list(block)
    require_columns(table, [*block, condition, metric, *carry], source)
    require_arms(table[condition], contrast, source)
    keys = table[block].drop_duplicates().reset_index(drop=True)
    keys["_block"] = np.arange(len(keys))
    indexed = table.merge(keys, on=block, how="left")
    if indexed.duplicated(["_block", condition]).any():
        dup = indexed.loc[indexed.duplicated(["_block", condition]), [*block, condition]].iloc[0]
        raise InputError(source, ", ".join(block), f"more than one trial for block/condition {tuple(dup)}")
    carried = _carried_columns(indexed, keys, list(carry), source)
    values = numeric_values(indexed[metric], source)
    wide = pd.Series(values, index=[indexed["_block"], indexed[condition]]).unstack()
    treatment = wide.get(contrast.treatment, pd.Series(np.nan, index=wide.index)).reindex(keys["_block"])
    baseline = wide.get(contrast.control, pd.Series(np.nan, index=wide.index)).reindex(keys["_block"])
    present = indexed.groupby("_block")[condition].agg(set).reindex(keys["_block"])
    has_treatment = present.map(lambda arms: contrast.treatment in arms).to_numpy()
    has_baseline = present.map(lambda arms: contrast.control in arms).to_numpy()
    has_values = treatment.notna().to_numpy() & baseline.notna().to_numpy()
    complete = has_treatment & has_baseline & has_values
    reasons = np.where(~has_treatment, f"missing arm {contrast.treatment}",
                       np.where(~has_baseline, f"missing arm {contrast.control}", f"missing {metric}"))
    excluded = keys.loc[~complete, block].assign(contrast=contrast.name, metric=metric,
                                                 reason=reasons[~complete]).reset_index(drop=True)
    kept = carried.loc[complete].reset_index(drop=True)
    differences = (treatment.to_numpy() - baseline.to_numpy())[complete]
    return BlockDifferences(contrast, metric, kept, differences, excluded)


@dataclass(frozen=True, eq=False)
class PairedContrastResult:
    """The statistics of one contrast on one metric in one stratum (PV-SST's published row).

    ``ci95_low``/``ci95_high`` are the percentile-bootstrap bounds at the plan's ``alpha`` (0.05 by
    default, a 95% interval); :meth:`conf_int` recomputes them at any level from the same seeded draws.
    The settings a row was computed with travel with it (:data:`SETTING_COLUMNS`).
    """

    contrast: str
    metric: str
    stratum_type: str
    stratum: str
    differences: np.ndarray
    mean_difference: float
    median_difference: float
    ci95_low: float
    ci95_high: float
    positive: int
    negative: int
    ties: int
    sign_test_p: float
    randomization_p: float
    randomization_method: str
    randomization_draws: int
    bootstrap_draws: int = BOOTSTRAP_DRAWS
    bootstrap_seed: int = ANALYSIS_SEED
    alpha: float = 0.05

    @property
    def n_blocks(self) -> int:
        return int(self.differences.size)

    def conf_int(self, alpha: float | None = None) -> tuple[float, float]:
        """Percentile-bootstrap ``1 - alpha`` interval of the mean difference.

        Parameters
        ----------
        alpha : float, optional
            One minus the interval's coverage, in (0, 1). None (the default) is this result's own
            ``alpha``, the level it was computed at (the plan's), whose bounds are ``ci95_low`` /
            ``ci95_high``; any other level is recomputed from the same seeded draws.

        Returns
        -------
        tuple of float
            ``(low, high)``.

        Examples
        --------
        >>> import pandas as pd
        >>> table = pd.DataFrame({"model": "m", "topic_id": "t", "seed": [1, 1, 2, 2, 3, 3],
        ...                       "condition": ["a", "b"] * 3, "y": [3.0, 1.0, 2.0, 1.0, 4.0, 1.0]})
        >>> result = paired_block_contrast(table, Contrast("a_minus_b", "a", "b"), "y", alpha=0.1)
        >>> result.conf_int() == (result.ci95_low, result.ci95_high)
        True
        >>> result.conf_int(alpha=0.5)
        (1.6666666666666667, 2.3333333333333335)
        """
        alpha = self.alpha if alpha is None else alpha
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), not {alpha!r}")
        if alpha == self.alpha:
            return self.ci95_low, self.ci95_high
        return bootstrap_mean_ci(self.differences, draws=self.bootstrap_draws, seed=self.bootstrap_seed,
                                 alpha=alpha)

    def to_frame(self) -> pd.DataFrame:
        """One row: the columns of PV-SST's published confirmatory table, then the settings used."""
        return pd.DataFrame([{column: self._value(column) for column in RESULT_COLUMNS}],
                            columns=list(RESULT_COLUMNS))

    def summary(self, alpha: float | None = None) -> str:
        """A short text report of this contrast, its interval at ``1 - alpha``.

        Parameters
        ----------
        alpha : float, optional
            As in :meth:`conf_int`: None (the default) is this result's own ``alpha``.

        Returns
        -------
        str
            Blocks and sign counts, mean and median difference, the bootstrap interval (level, draws,
            seed) and both p-values.

        Examples
        --------
        >>> import pandas as pd
        >>> table = pd.DataFrame({"model": "m", "topic_id": "t", "seed": [1, 1, 2, 2, 3, 3],
        ...                       "condition": ["a", "b"] * 3, "y": [3.0, 1.0, 2.0, 1.0, 4.0, 1.0]})
        >>> result = paired_block_contrast(table, Contrast("a_minus_b", "a", "b"), "y", alpha=0.1)
        >>> print(result.summary(alpha=0.5))
        Paired contrast a_minus_b on y (overall = all)
          blocks: 3  (positive 3, negative 0, ties 0)
          mean difference +2  median +2
          50% bootstrap CI [+1.66667, +2.33333] (20000 draws, seed 20260729)
          exact sign test p = 0.25
          sign-flip randomization p = 0.25 (exhaustive, 8 patterns)
        """
        alpha = self.alpha if alpha is None else alpha
        low, high = self.conf_int(alpha)
        return "\n".join([
            f"Paired contrast {self.contrast} on {self.metric} ({self.stratum_type} = {self.stratum})",
            f"  blocks: {self.n_blocks}  (positive {self.positive}, negative {self.negative}, "
            f"ties {self.ties})",
            f"  mean difference {self.mean_difference:+.6g}  median {self.median_difference:+.6g}",
            f"  {100 * (1 - alpha):g}% bootstrap CI [{low:+.6g}, {high:+.6g}] "
            f"({self.bootstrap_draws} draws, seed {self.bootstrap_seed})",
            f"  exact sign test p = {self.sign_test_p:.6g}",
            f"  sign-flip randomization p = {self.randomization_p:.6g} "
            f"({self.randomization_method}, {self.randomization_draws} patterns)",
        ])

    def _value(self, column: str) -> object:
        return self.n_blocks if column == "n_blocks" else getattr(self, column)


def paired_block_contrast(table: pd.DataFrame, contrast: Contrast, metric: str, *,
                          block: Sequence[str] = PVSST_BLOCK, condition: str = "condition",
                          draws: int = BOOTSTRAP_DRAWS, seed: int = ANALYSIS_SEED, alpha: float = 0.05,
                          randomization: RandomizationPlan = RandomizationPlan(),
                          source: str = "table") -> PairedContrastResult:
    """All statistics of one contrast on one metric over every complete block of ``table``.

    For many contrasts and strata use :func:`pvsst.analysis.stats.contrast_table.paired_contrast_table` (the same
    numbers, batched).

    Parameters
    ----------
    table : pandas.DataFrame
        One row per trial (see :func:`block_differences`).
    contrast : Contrast
        ``name = treatment - control``.
    metric : str
        The outcome column.
    block, condition
        As in :func:`block_differences`.
    draws, seed, alpha
        The percentile bootstrap (:func:`pvsst.analysis.stats.block_tests.bootstrap_mean_ci`); ``seed`` also
        seeds the Monte Carlo sign flips.
    randomization : RandomizationPlan
        The sign-flip test's method and draws.
    source : str
        The input's name in error lines.

    Returns
    -------
    PairedContrastResult
        Stratum ``overall = all``; ``conf_int()`` and ``summary()`` report at ``alpha``.

    Raises
    ------
    InputError
        No complete block (and the errors of :func:`block_differences`).

    Notes
    -----
    Over the ``n`` complete blocks' differences ``d``: mean, median, sign counts, the percentile
    bootstrap interval of the mean (``1 - alpha``), the exact sign test
    ``min(1, 2 P(X <= min(pos, neg)))`` with ``X ~ Bin(pos + neg, 1/2)``, and the sign-flip randomization
    p of ``|mean|`` over the nonzero differences. Incomplete blocks are excluded with an
    :class:`IncompleteBlocksWarning`.

    References
    ----------
    .. [1] Usman and Williamson, "Peer-Voted LLM-Agent Stress Tests" (PV-SST), arXiv 2608.20438.
    .. [2] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993.
    .. [3] W. J. Conover, *Practical Nonparametric Statistics*, 3rd ed., Wiley, 1999.

    Examples
    --------
    >>> table = pd.DataFrame({"model": ["m"] * 6, "topic_id": ["t"] * 6, "seed": [1, 1, 2, 2, 3, 3],
    ...                       "condition": ["likes", "control"] * 3, "y": [0.3, 0.1, 0.5, 0.2, 0.1, 0.2]})
    >>> result = paired_block_contrast(table, Contrast("likes_minus_control", "likes", "control"), "y")
    >>> result.n_blocks, (result.positive, result.negative), round(result.mean_difference, 6), result.sign_test_p
    (3, (2, 1), 0.133333, 1.0)
    """
    diffs = block_differences(table, contrast, metric, block=block, condition=condition, source=source)
    warn_excluded(diffs.excluded)
    if diffs.differences.size == 0:
        raise InputError(source, f"contrast {contrast.name}", "no complete blocks")
    d = diffs.differences
    positive, negative, ties = sign_counts(d)
    low, high = bootstrap_mean_ci(d, draws=draws, seed=seed, alpha=alpha)
    p_flip, method, patterns = sign_flip_p(d[d != 0], randomization, seed=seed)
    return PairedContrastResult(contrast.name, metric, "overall", "all", d, float(np.mean(d)),
                                float(np.median(d)), low, high, positive, negative, ties,
                                sign_test_p(positive, negative), p_flip, method, patterns, draws, seed, alpha)


def require_columns(table: pd.DataFrame, columns: Sequence[str], source: str) -> None:
    """Raise :class:`InputError` naming the first column of ``columns`` missing from ``table``.

    Parameters
    ----------
    table : pandas.DataFrame
        The input.
    columns : sequence of str
        The columns it must have.
    source : str
        The input's name in the error line.

    Returns
    -------
    None

    Examples
    --------
    >>> require_columns(pd.DataFrame({"a": [1]}), ["a", "b"], "trials.csv")
    Traceback (most recent call last):
    ...
    pvsst.core.errors.InputError: trials.csv: b: missing column
    """
    for column in columns:
        if column not in table.columns:
            raise InputError(source, column, "missing column")


def numeric_values(column: pd.Series, source: str) -> np.ndarray:
    """A metric column as floats: booleans (or the strings True/False) count as 1/0, blanks as NaN.

    Parameters
    ----------
    column : pandas.Series
        The metric column.
    source : str
        The input's name in the error line.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    InputError
        A value that is neither a number, a boolean nor blank.

    Examples
    --------
    >>> numeric_values(pd.Series([True, "False", "0.5", ""], name="y"), "trials").tolist()
    [1.0, 0.0, 0.5, nan]
    """
    if column.dtype == object:
        column = column.replace({"True": 1.0, "False": 0.0, True: 1.0, False: 0.0})
    numeric = pd.to_numeric(column, errors="coerce")
    bad = numeric.isna() & column.notna() & (column.astype(str).str.strip() != "")
    if bad.any():
        raise InputError(source, str(column.name), f"not numeric: {column[bad].iloc[0]!r}")
    return numeric.to_numpy(dtype=float)


def warn_excluded(excluded: pd.DataFrame) -> None:
    """Emit one :class:`IncompleteBlocksWarning` line summarising excluded blocks (nothing when there are none).

    Parameters
    ----------
    excluded : pandas.DataFrame
        ``contrast`` and ``reason`` columns, one row per excluded block.

    Returns
    -------
    None

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_excluded(pd.DataFrame({"contrast": ["e", "e"], "reason": ["missing arm control"] * 2}))
    >>> str(caught[0].message)
    'excluded 2 incomplete block(s): e: 2 (missing arm control)'
    """
    if len(excluded):
        counts = excluded.groupby(["contrast", "reason"], sort=False).size()
        detail = "; ".join(f"{c}: {n} ({r})" for (c, r), n in counts.items())
        warnings.warn(f"excluded {len(excluded)} incomplete block(s): {detail}", IncompleteBlocksWarning,
                      stacklevel=3)


def _carried_columns(indexed: pd.DataFrame, keys: pd.DataFrame, carry: list[str], source: str
                     ) -> pd.DataFrame:
    extra = [c for c in carry if c not in keys.columns]
    if not extra:
        return keys
    per_block = indexed.groupby("_block")[extra]
    varying = [c for c in extra if (per_block[c].nunique(dropna=False) > 1).any()]
    if varying:
        raise InputError(source, varying[0], "stratum column varies within a block")
    return keys.join(per_block.first(), on="_block")
