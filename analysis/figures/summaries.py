"""The tables the figures draw: means with 95% percentile-bootstrap CIs over blocks.

A *block* is one model x topic x seed (the ``block_id`` column where present); each arm has one trial per
block, so "over blocks" means over those trials. Intervals are PV-SST's percentile bootstrap of the mean
(:func:`pvsst.analysis.stats.block_tests.bootstrap_mean_ci_batch`, fresh ``default_rng(seed)`` per cell), so a figure
and the statistics tables agree on how an interval is made.

Examples
--------
>>> import pandas as pd
>>> rounds = pd.DataFrame({"block_id": ["b1", "b2", "b1", "b2"], "condition": "likes",
...                        "round": [0, 0, 1, 1], "pairwise_similarity": [0.1, 0.3, 0.2, 0.4]})
>>> summary = mean_ci_by(rounds, "pairwise_similarity", ["condition", "round"], draws=200)
>>> summary["n_blocks"].tolist(), summary["mean"].round(6).tolist()
([2, 2], [0.2, 0.3])
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pvsst.analysis.stats.block_tests import bootstrap_mean_ci_batch
from pvsst.core.defaults import ANALYSIS_SEED, BOOTSTRAP_DRAWS
from pvsst.core.errors import InputError

BLOCK_COLUMNS = ("model", "topic_id", "seed")
SUMMARY_COLUMNS = ("n_blocks", "mean", "ci_low", "ci_high")
CI_METHOD = "95% percentile bootstrap over blocks"


def block_key(table: pd.DataFrame) -> pd.Series:
    """One label per row naming its block: ``block_id`` if present, else model|topic_id|seed."""
    if "block_id" in table.columns and table["block_id"].notna().all():
        return table["block_id"].astype(str)
    present = [c for c in BLOCK_COLUMNS if c in table.columns]
    if not present:
        return pd.Series(np.arange(len(table)).astype(str), index=table.index)  # each row its own block
    return table[present].astype(str).agg("|".join, axis=1)


def mean_ci_by(table: pd.DataFrame, value: str, by: Sequence[str], *, draws: int = BOOTSTRAP_DRAWS,
               seed: int = ANALYSIS_SEED, alpha: float = 0.05) -> pd.DataFrame:
    """Per group of ``by``: number of blocks, mean of ``value`` over blocks and its bootstrap CI.

    Rows of one block within a group are averaged first, so every block counts once. Missing values
    are left out. Columns: ``*by, n_blocks, mean, ci_low, ci_high``; groups sorted by ``by``.
    """
    by = list(by)
    for column in [*by, value]:
        if column not in table.columns:
            raise InputError("table", column, "missing column")
    frame = table[by].copy()
    frame["_block"] = block_key(table)
    frame["_value"] = pd.to_numeric(table[value].astype(float), errors="coerce")
    frame = frame.dropna(subset=["_value"])
    per_block = frame.groupby([*by, "_block"], sort=True)["_value"].mean().reset_index()
    groups = list(per_block.groupby(by, sort=True))
    vectors = [g["_value"].to_numpy(float) for _, g in groups]
    low, high = bootstrap_mean_ci_batch(vectors, draws=draws, seed=seed, alpha=alpha)
    rows = []
    for i, (key, _) in enumerate(groups):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key)), "n_blocks": len(vectors[i]), "mean": float(vectors[i].mean()),
                     "ci_low": float(low[i]), "ci_high": float(high[i])})
    return pd.DataFrame(rows, columns=[*by, *SUMMARY_COLUMNS])


def n_phrase(counts: Sequence[int], unit: str = "blocks") -> str:
    """``n = 8 blocks`` or ``n = 2-8 blocks`` per point, for captions.

    >>> n_phrase([8, 8]), n_phrase([2, 8])
    ('n = 8 blocks', 'n = 2-8 blocks')
    """
    counts = [int(c) for c in counts]
    if not counts:
        return f"n = 0 {unit}"
    low, high = min(counts), max(counts)
    return f"n = {low} {unit}" if low == high else f"n = {low}-{high} {unit}"
