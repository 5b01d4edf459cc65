"""Belief-behaviour consistency by arm and model: posts against reported stances, likes against sides.

Drawn from ``RUN/analysis/belief_consistency.csv`` (:mod:`pvsst.analysis.consistency.run_summary`): each
point is a mean over blocks with its block-bootstrap interval. Left panel (when a judge read the posts):
the share of posts whose judged side agrees with the reported stance and the share that argue the other
side. Right panel: the like rate of same-side and of other-side votes, with the chance rate (the like
rate of all sided votes) as a dashed tick: likes that ignore stance put both rates on it.

Examples
--------
>>> import pandas as pd
>>> rows = [{"model": "m", "condition": arm, "metric": metric, "n_blocks": 4, "mean": mean,
...          "ci_low": mean - 0.05, "ci_high": mean + 0.05, "judge": "lexicon"}
...         for arm in ("control", "likes")
...         for metric, mean in (("like_rate_same_side", 0.6), ("like_rate_other_side", 0.4),
...                              ("like_rate_chance", 0.5), ("stance_side_agreement", 0.8),
...                              ("stance_contradiction_rate", 0.2))]
>>> figure = belief_consistency_figure(pd.DataFrame(rows))
>>> len(figure.axes), len(figure.data)
(2, 10)
>>> figure.close()
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.figures.style import PaperFigure, in_style, new_figure, ordered_arms, series_styles
from pvsst.analysis.figures.summaries import CI_METHOD, n_phrase
from pvsst.analysis.stats.paired import require_columns
from pvsst.core.errors import InputError

POST_PANEL = (("stance_side_agreement", "post on the reported side"),
              ("stance_contradiction_rate", "post argues the other side"))
VOTE_PANEL = (("like_rate_same_side", "likes of same-side posts"),
              ("like_rate_other_side", "likes of other-side posts"))
CHANCE = "chance: likes of all sided posts"
CHANCE_GREY = "0.45"


@in_style
def belief_consistency_figure(summary: pd.DataFrame) -> PaperFigure:
    """Consistency by arm (x) and model (offsets), one panel for posts (if judged) and one for votes.

    Every series (metric, and model when there are several) has its own colour and marker, the second
    metric of a panel drawn open; the chance rate is a grey dashed tick. ``data``: the rows of ``summary``
    drawn (model, condition, metric, n_blocks, mean, ci_low, ci_high).
    """
    require_columns(summary, ("model", "condition", "metric", "mean", "ci_low", "ci_high", "n_blocks"),
                    "belief_consistency")
    drawn = summary[summary["metric"].isin([m for m, _ in POST_PANEL + VOTE_PANEL] + ["like_rate_chance"])]
    drawn = drawn[drawn["mean"].notna()]
    if drawn.empty:
        raise InputError("belief_consistency", "rows", "no consistency metric to draw")
    panels = [(title, spec) for title, spec in (("posts vs reported stance", POST_PANEL),
                                                ("likes vs sides", VOTE_PANEL))
              if drawn["metric"].isin([m for m, _ in spec]).any()]
    arms = ordered_arms(drawn["condition"].astype(str))
    models = sorted(drawn["model"].astype(str).unique())

    def series(label: str, model: str) -> str:
        return f"{label} ({model})" if len(models) > 1 else label

    names = [series(label, model) for _, spec in panels for model in models for _, label in spec]
    styles = series_styles(names, hollow=[series(spec[1][1], model) for _, spec in panels for model in models])
    figure = new_figure(height=2.6, ncols=len(panels), sharey=True)
    width = 0.6 / max(1, len(models))
    for ax, (title, spec) in zip(figure.axes, panels):
        for k, model in enumerate(models):
            mine = drawn[drawn["model"].astype(str) == model]
            for j, (metric, label) in enumerate(spec):
                rows = mine[mine["metric"] == metric].set_index("condition").reindex(arms)
                x = np.arange(len(arms)) - 0.3 + width * (k + 0.5) + (j - 0.5) * width * 0.4
                ax.errorbar(x, rows["mean"].to_numpy(float),
                            yerr=[(rows["mean"] - rows["ci_low"]).to_numpy(float),
                                  (rows["ci_high"] - rows["mean"]).to_numpy(float)],
                            markersize=3.5, label=series(label, model), **styles[series(label, model)].errorbar())
            if spec is VOTE_PANEL:
                chance = mine[mine["metric"] == "like_rate_chance"].set_index("condition").reindex(arms)
                centres = np.arange(len(arms)) - 0.3 + width * (k + 0.5)
                ax.hlines(chance["mean"].to_numpy(float), centres - width / 2, centres + width / 2,
                          colors=CHANCE_GREY, linestyles="dashed", linewidth=0.8, label=CHANCE if k == 0 else None)
        ax.set_xticks(np.arange(len(arms)), [a.replace("_", "\n") for a in arms])
        ax.set_xlabel("arm")
        ax.set_title(title)
        ax.set_ylim(-0.05, 1.05)
    legend = {}
    for ax in figure.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    figure.legend(list(legend.values()), list(legend), loc="outside upper center", ncols=2, fontsize=6)
    figure.axes[0].set_ylabel("share")
    judges = sorted({str(j) for j in summary.get("judge", pd.Series(dtype=object)).dropna() if str(j)})
    judged = f"posts read by the stance judge {', '.join(judges)}; " if judges else ""
    caption = ("Belief-behaviour consistency by arm" + (" and model" if len(models) > 1 else "") +
               f", each series in its own colour and marker: {judged}like rates of votes on posts of the voter's own "
               "side and of the other side, the grey dashed tick the chance rate (all sided votes). Points: mean "
               "over blocks with "
               f"{CI_METHOD}; {n_phrase(drawn['n_blocks'])} per point.")
    return PaperFigure("belief_consistency", figure, caption, drawn.reset_index(drop=True))
