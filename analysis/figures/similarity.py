"""Lexical similarity of honest posts by round, one line per arm (mean and 95% CI over blocks).

Reads ``RUN/analysis/per_round.csv`` (columns condition, round, pairwise_similarity and the block
columns). The per-round similarity is PV-SST's primary metric computed on each round's honest posts.

Examples
--------
>>> import pandas as pd
>>> rounds = pd.DataFrame({"block_id": ["b1", "b2"] * 2, "condition": ["control"] * 2 + ["likes"] * 2,
...                        "round": 0, "pairwise_similarity": [0.1, 0.2, 0.3, 0.5]})
>>> figure = similarity_by_round_figure(rounds, draws=100)
>>> figure.data["mean"].round(3).tolist()
[0.15, 0.4]
>>> figure.close()
"""
from __future__ import annotations

import pandas as pd

from pvsst.analysis.figures.style import (
    PaperFigure,
    color_for,
    in_style,
    legend_above,
    marker_for,
    new_figure,
    ordered_arms,
)
from pvsst.analysis.figures.summaries import CI_METHOD, mean_ci_by, n_phrase
from pvsst.core.defaults import ANALYSIS_SEED, BOOTSTRAP_DRAWS

SIMILARITY_LABEL = "pairwise TF-IDF cosine (0-1)"


def draw_round_lines(ax, summary: pd.DataFrame, arms: list[str]) -> None:
    """One errorbar line per arm: x = round, y = mean, bars = CI (asymmetric)."""
    for arm in arms:
        rows = summary[summary["condition"] == arm].sort_values("round")
        ax.errorbar(rows["round"].to_numpy(float), rows["mean"].to_numpy(float),
                    yerr=[(rows["mean"] - rows["ci_low"]).to_numpy(float),
                          (rows["ci_high"] - rows["mean"]).to_numpy(float)],
                    color=color_for(arm, arms), marker=marker_for(arm, arms), label=arm.replace("_", " "))
    rounds = sorted(summary["round"].unique())
    ax.set_xticks(rounds)


@in_style
def similarity_by_round_figure(per_round: pd.DataFrame, *, draws: int = BOOTSTRAP_DRAWS,
                               seed: int = ANALYSIS_SEED) -> PaperFigure:
    """Mean honest-post similarity per round and arm with its 95% bootstrap CI over blocks.

    ``data`` holds one row per arm x round: condition, round, n_blocks, mean, ci_low, ci_high.
    """
    summary = mean_ci_by(per_round, "pairwise_similarity", ["condition", "round"], draws=draws, seed=seed)
    arms = ordered_arms(summary["condition"])
    figure = new_figure()
    ax = figure.axes[0]
    draw_round_lines(ax, summary, arms)
    ax.set_xlabel("round")
    ax.set_ylabel(f"similarity, {SIMILARITY_LABEL}")
    legend_above(figure, ax)
    caption = (f"Lexical similarity of honest agents' posts by round (mean pairwise TF-IDF cosine of the "
               f"round's posts), per arm. Points: mean over blocks; bars: {CI_METHOD} "
               f"({draws:,} draws, seed {seed}); {n_phrase(summary['n_blocks'])} per point.")
    return PaperFigure("similarity_by_round", figure, caption, summary)
