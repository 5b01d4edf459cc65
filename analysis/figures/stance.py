"""Stance figures: alignment trajectories by arm and push direction, opposite-side survival by arm.

Alignment is ``push * stance`` averaged over honest agents (stance points on PV-SST's -3..+3 scale, so
positive means toward the adversaries' pushed side). Survival is the share of agents that started on
the side opposite the push and ended strictly on it.

Examples
--------
>>> import pandas as pd
>>> outcomes = pd.DataFrame({"block_id": ["b1", "b2", "b1", "b2"], "condition": ["control"] * 2 + ["likes"] * 2,
...                          "opposite_side_survival": [1.0, 0.5, 0.5, 0.5]})
>>> figure = survival_by_arm_figure(outcomes, draws=100)
>>> figure.data[["condition", "mean"]].values.tolist()
[['control', 0.75], ['likes', 0.5]]
>>> figure.close()
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.figures.similarity import draw_round_lines
from pvsst.analysis.figures.style import PaperFigure, color_for, in_style, legend_above, new_figure, ordered_arms
from pvsst.analysis.figures.summaries import CI_METHOD, mean_ci_by, n_phrase
from pvsst.core.defaults import ANALYSIS_SEED, BOOTSTRAP_DRAWS
from pvsst.core.errors import InputError

PUSH_DIRECTIONS = ("support", "oppose")


@in_style
def stance_trajectories_figure(per_round: pd.DataFrame, *, draws: int = BOOTSTRAP_DRAWS,
                               seed: int = ANALYSIS_SEED) -> PaperFigure:
    """Alignment with the push by round, one panel per push direction, one line per arm.

    ``data``: push_direction, condition, round, n_blocks, mean, ci_low, ci_high.
    """
    if "push_direction" not in per_round.columns:
        raise InputError("per_round", "push_direction", "missing column")
    summary = mean_ci_by(per_round, "alignment", ["push_direction", "condition", "round"], draws=draws,
                         seed=seed)
    arms = ordered_arms(summary["condition"])
    directions = [d for d in PUSH_DIRECTIONS if d in set(summary["push_direction"])]
    directions += sorted(set(summary["push_direction"]) - set(directions))
    figure = new_figure(height=2.2, ncols=len(directions), sharey=True)
    for ax, direction in zip(figure.axes, directions):
        draw_round_lines(ax, summary[summary["push_direction"] == direction], arms)
        ax.axhline(0.0, color="0.6", linewidth=0.6, zorder=0)
        ax.set_title(f"push: {direction}")
        ax.set_xlabel("round")
    figure.axes[0].set_ylabel("alignment with push (stance points)")
    legend_above(figure, figure.axes[0])
    caption = ("Stance trajectories of honest agents: mean alignment with the push direction "
               "(push x stance, stance on a -3..+3 scale; > 0 is toward the pushed side) by round, per arm, "
               f"one panel per push direction. Bars: {CI_METHOD} ({draws:,} draws, seed {seed}); "
               f"{n_phrase(summary['n_blocks'])} per point.")
    return PaperFigure("stance_trajectories", figure, caption, summary)


@in_style
def survival_by_arm_figure(trial_outcomes: pd.DataFrame, *, draws: int = BOOTSTRAP_DRAWS,
                           seed: int = ANALYSIS_SEED) -> PaperFigure:
    """Opposite-side survival per arm: each trial as a dot, the mean over blocks with its 95% CI.

    ``data``: condition, n_blocks, mean, ci_low, ci_high.
    """
    summary = mean_ci_by(trial_outcomes, "opposite_side_survival", ["condition"], draws=draws, seed=seed)
    arms = ordered_arms(summary["condition"])
    summary = summary.set_index("condition").loc[arms].reset_index()
    figure = new_figure(height=2.2)
    ax = figure.axes[0]
    positions = np.arange(len(arms), dtype=float)
    values = pd.to_numeric(trial_outcomes["opposite_side_survival"].astype(float), errors="coerce")
    for x, arm in zip(positions, arms):
        trials = values[trial_outcomes["condition"].astype(str) == arm].dropna().to_numpy(float)
        ax.scatter(np.full(trials.size, x - 0.18), trials, s=6, color=color_for(arm, arms), alpha=0.45,
                   linewidths=0, zorder=1)
    ax.errorbar(positions, summary["mean"].to_numpy(float),
                yerr=[(summary["mean"] - summary["ci_low"]).to_numpy(float),
                      (summary["ci_high"] - summary["mean"]).to_numpy(float)],
                fmt="o", color="black", zorder=2)
    ax.set_xticks(positions, [a.replace("_", "\n") for a in arms])
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("survival (share of agents)")
    caption = ("Opposite-side survival by arm: share of honest agents starting on the side opposite the "
               "push that end strictly on it. Small dots: trials; black points: mean over blocks with "
               f"{CI_METHOD} ({draws:,} draws, seed {seed}); {n_phrase(summary['n_blocks'])} per arm.")
    return PaperFigure("opposite_side_survival", figure, caption, summary)
