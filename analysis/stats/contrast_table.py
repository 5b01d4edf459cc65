"""All contrasts x metrics x strata in one batched pass: PV-SST's published confirmatory table.

Row order follows the published CSV: for each contrast, for each metric, the ``overall`` stratum ``all``
then each stratum column in turn (its ``stratum_type`` is the column name without a trailing ``_id``:
``model``, ``topic``), its values sorted. Within a stratum, blocks keep first-appearance order.

Examples
--------
>>> import pandas as pd
>>> table = pd.DataFrame({"model": ["a", "a", "b", "b"] * 2, "topic_id": ["t"] * 8,
...                       "seed": [1, 1, 1, 1, 2, 2, 2, 2], "condition": ["likes", "control"] * 4,
...                       "y": [0.4, 0.1, 0.3, 0.2, 0.2, 0.3, 0.5, 0.1]})
>>> analysis = paired_contrast_table(table, [Contrast("eng", "likes", "control")], ["y"], strata=["model"])
>>> analysis.frame[["stratum_type", "stratum", "n_blocks", "positive", "negative"]].values.tolist()
[['overall', 'all', 4, 3, 1], ['model', 'a', 2, 1, 1], ['model', 'b', 2, 2, 0]]

On PV-SST's published table, the published columns of
``paired_contrast_table(table, PVSST_CONTRASTS, PVSST_METRICS).frame`` are
``pvsst_v1_core_confirmatory_analysis.csv`` (216 rows; ``tests/analysis/test_paired_reference.py``).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pvsst.analysis.stats.block_tests import bootstrap_mean_ci_batch, sign_counts, sign_flip_p_batch, sign_test_p
from pvsst.analysis.stats.paired import (
    RESULT_COLUMNS,
    BlockDifferences,
    PairedContrastResult,
    block_differences,
    require_columns,
    warn_excluded,
)
from pvsst.analysis.stats.plan import PVSST_BLOCK, PVSST_STRATA, Contrast, RandomizationPlan
from pvsst.core.defaults import ANALYSIS_SEED, BOOTSTRAP_DRAWS
from pvsst.core.errors import InputError

EXCLUDED_COLUMNS = ("contrast", "metric", "reason")


@dataclass(frozen=True)
class PairedContrastAnalysis:
    """The results of :func:`paired_contrast_table`.

    ``frame`` has PV-SST's published columns then the settings used
    (:data:`~pvsst.analysis.stats.paired.SETTING_COLUMNS`),
    one row per result; ``excluded_blocks`` one row per (contrast, metric, block) left out, with the reason.
    """

    results: tuple[PairedContrastResult, ...]
    excluded_blocks: pd.DataFrame

    @property
    def frame(self) -> pd.DataFrame:
        rows = [{c: r._value(c) for c in RESULT_COLUMNS} for r in self.results]
        return pd.DataFrame(rows, columns=list(RESULT_COLUMNS))

    def result(self, contrast: str, metric: str, stratum_type: str = "overall",
               stratum: str = "all") -> PairedContrastResult:
        """The one result for (contrast, metric, stratum)."""
        for r in self.results:
            if (r.contrast, r.metric, r.stratum_type, r.stratum) == (contrast, metric, stratum_type,
                                                                      str(stratum)):
                return r
        raise KeyError((contrast, metric, stratum_type, stratum))


def stratum_type_name(column: str) -> str:
    """The published ``stratum_type`` label of a strata column: ``topic_id`` -> ``topic``.

    Parameters
    ----------
    column : str
        A strata column.

    Returns
    -------
    str

    Examples
    --------
    >>> stratum_type_name("topic_id"), stratum_type_name("model")
    ('topic', 'model')
    """
    return column[:-3] if column.endswith("_id") else column


def paired_contrast_table(table: pd.DataFrame, contrasts: Sequence[Contrast], metrics: Sequence[str], *,
                          block: Sequence[str] = PVSST_BLOCK, strata: Sequence[str] = PVSST_STRATA,
                          condition: str = "condition", draws: int = BOOTSTRAP_DRAWS,
                          seed: int = ANALYSIS_SEED, alpha: float = 0.05,
                          randomization: RandomizationPlan = RandomizationPlan(),
                          source: str = "table") -> PairedContrastAnalysis:
    """Every contrast x metric x stratum of a per-trial table, batched (seconds for PV-SST's 216 rows).

    Parameters
    ----------
    table : pandas.DataFrame
        One row per trial with the ``block`` columns, ``condition`` and each metric.
    contrasts : sequence of Contrast
        What to compare.
    metrics : sequence of str
        The outcome columns (each contrast also on its own ``metrics``, after these).
    block : sequence of str
        The columns whose combination is a block (PV-SST: model, topic_id, seed).
    strata : sequence of str
        Columns constant within a block to report separately (besides ``overall``).
    condition : str
        The arm column.
    draws, seed : int
        Bootstrap draws, and the seed of every fresh generator (bootstrap and Monte Carlo).
    alpha : float
        The interval is the ``1 - alpha`` percentile interval.
    randomization : RandomizationPlan
        Method and draws of the sign-flip test.
    source : str
        The input's name in error lines.

    Returns
    -------
    PairedContrastAnalysis
        ``results`` (one :class:`~pvsst.analysis.stats.paired.PairedContrastResult` per row), ``frame`` (PV-SST's
        published columns, then the settings) and ``excluded_blocks``.

    Raises
    ------
    InputError
        A contrast with no complete block, an arm that is not a value of ``condition``, a missing column.

    Notes
    -----
    Per row, over the blocks' differences ``d_b = y_b(treatment) - y_b(control)`` of the stratum: the
    mean and median, sign counts, the percentile bootstrap interval of the mean, the exact sign test and
    the sign-flip randomization test of ``|mean|`` (formulas in :mod:`pvsst.analysis.stats.block_tests`).
    Incomplete blocks are excluded per contrast and reported (``excluded_blocks`` plus one
    :class:`~pvsst.analysis.stats.paired.IncompleteBlocksWarning` line).

    References
    ----------
    .. [1] Usman and Williamson, "Peer-Voted LLM-Agent Stress Tests" (PV-SST), arXiv 2608.20438: on its
       per-trial table this reproduces its published ``pvsst_v1_core_confirmatory_analysis.csv``.

    Examples
    --------
    >>> table = pd.DataFrame({"model": ["a", "a", "b", "b"] * 2, "topic_id": "t", "seed": [1, 1, 1, 1, 2, 2, 2, 2],
    ...                       "condition": ["likes", "control"] * 4, "y": [0.4, 0.1, 0.3, 0.2, 0.2, 0.3, 0.5, 0.1]})
    >>> analysis = paired_contrast_table(table, [Contrast("eng", "likes", "control")], ["y"], strata=["model"])
    >>> analysis.frame[["stratum", "n_blocks", "mean_difference"]].round(4).values.tolist()
    [['all', 4, 0.175], ['a', 2, 0.1], ['b', 2, 0.25]]
    """
    if not contrasts or not metrics:
        raise InputError(source, "contrasts" if not contrasts else "metrics", "nothing to analyse")
    extra = [m for c in contrasts for m in c.metrics]
    require_columns(table, list(dict.fromkeys([*block, condition, *strata, *metrics, *extra])), source)
    cells: list[tuple[str, str, str, str, np.ndarray]] = []
    excluded: list[pd.DataFrame] = []
    for contrast in contrasts:
        for metric in dict.fromkeys([*metrics, *contrast.metrics]):
            diffs = block_differences(table, contrast, metric, block=block, condition=condition,
                                      carry=strata, source=source)
            if diffs.differences.size == 0:
                raise InputError(source, f"contrast {contrast.name}", f"no complete blocks for {metric}")
            excluded.append(diffs.excluded)
            cells.extend(_strata_cells(diffs, strata))
    excluded_blocks = (pd.concat(excluded, ignore_index=True) if excluded
                       else pd.DataFrame(columns=[*block, *EXCLUDED_COLUMNS]))
    warn_excluded(excluded_blocks.drop_duplicates([*block, "contrast", "reason"]))
    return PairedContrastAnalysis(_batched_results(cells, draws, seed, alpha, randomization), excluded_blocks)


def _strata_cells(diffs: BlockDifferences, strata: Sequence[str]):
    name, metric = diffs.contrast.name, diffs.metric
    yield name, metric, "overall", "all", diffs.differences
    for column in strata:
        values = diffs.blocks[column]
        for level in sorted(pd.unique(values)):
            yield (name, metric, stratum_type_name(column), str(level),
                   diffs.differences[(values == level).to_numpy()])


def _batched_results(cells, draws: int, seed: int, alpha: float, randomization: RandomizationPlan
                     ) -> tuple[PairedContrastResult, ...]:
    vectors = [cell[4] for cell in cells]
    low, high = bootstrap_mean_ci_batch(vectors, draws=draws, seed=seed, alpha=alpha)
    p_flip, methods, patterns = sign_flip_p_batch([v[v != 0] for v in vectors], randomization, seed=seed)
    results = []
    for i, (contrast, metric, stratum_type, stratum, d) in enumerate(cells):
        positive, negative, ties = sign_counts(d)
        results.append(PairedContrastResult(
            contrast, metric, stratum_type, stratum, d, float(np.mean(d)), float(np.median(d)),
            float(low[i]), float(high[i]), positive, negative, ties, sign_test_p(positive, negative),
            float(p_flip[i]), methods[i], int(patterns[i]), draws, seed, alpha))
    return tuple(results)
