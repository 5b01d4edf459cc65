"""Survey-report figure of answer shares by group: for every grouping axis and question, each group's
real answer shares beside each model's, with the group sizes.

It reads the answer-share table (:func:`pvsst.analysis.survey.shares.answer_shares`: question, source,
group, option, position, share, n_units; ``label`` where the report adds option labels). Controls are
left out (their group shares are the human ones, or have no group structure by construction).

Examples
--------
>>> import pandas as pd
>>> rows = [{"question": "q", "source": s, "group": f"sex={g}", "option": o, "position": i, "share": v,
...          "n_units": 40} for s in ("human", "m | c") for g in ("f", "m")
...         for i, (o, v) in enumerate([("yes", 0.6), ("no", 0.4)])]
>>> figure = group_shares_figure(pd.DataFrame(rows))
>>> sorted(figure.data["source"].unique()), int(figure.data["n_units"].iloc[0])
(['human', 'm | c'], 40)
>>> figure.close()
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.figures.style import PaperFigure, in_style, new_figure
from pvsst.analysis.figures.survey.answers import (
    WIDE_IN,
    _option_labels,
    _require,
    _source_order,
    option_colours,
    option_legend,
)
from pvsst.analysis.figures.survey.fidelity import is_control

TICK_CHAR_IN = 0.02  # about the width of a tick label character at 3.5 pt
BARS_MIN_IN = 1.0  # the narrowest a panel's bars may get


def _short(source: str) -> str:
    """A model row's label: the source without the provider's route (``embedded/``, ``openai/``...)."""
    return source.split("/", 1)[-1]


@in_style
def group_shares_figure(shares: pd.DataFrame) -> PaperFigure:
    """A panel per question (rows) and grouping axis (columns); in each, a 100% stacked bar per group
    level and source (human first, then each model), labelled with the level and its size.

    ``data``: question, axis, level, source, option, label, share, left, row, n_units.
    """
    _require(shares, ("question", "source", "group", "option", "position", "share", "n_units"), "answer shares")
    shares = shares[(shares["group"].astype(str) != "all") & ~shares["source"].astype(str).map(is_control)]
    _require(shares, ("group",), "answer shares by group")
    shares = shares.assign(label=_option_labels(shares), axis=shares["group"].astype(str).str.split("=").str[0],
                           level=shares["group"].astype(str).str.split("=", n=1).str[1])
    colour_of = option_colours(shares)
    questions = list(dict.fromkeys(shares["question"].astype(str)))
    axes_names = list(dict.fromkeys(shares["axis"]))
    sources = _source_order(shares["source"])
    levels = {a: sorted(shares.loc[shares["axis"] == a, "level"].unique()) for a in axes_names}
    bars = max(len(v) for v in levels.values()) * len(sources)
    longest = max(len(f"{_short(s)} (n=00000)") for s in [*sources, *(f"{v}" for vs in levels.values() for v in vs)])
    # a panel is its tick labels (long model x condition names) beside its bars: as many columns as fit
    ncols = max(1, min(len(axes_names), int(WIDE_IN // (TICK_CHAR_IN * longest + BARS_MIN_IN))))
    panels = [(question, axis) for question in questions for axis in axes_names]
    nrows = -(-len(panels) // ncols)
    figure = new_figure(width=WIDE_IN, height=0.5 + nrows * (0.3 + 0.075 * bars), nrows=nrows, ncols=ncols, sharex=True)
    for ax in figure.axes[len(panels):]:
        ax.set_visible(False)
    records = []
    for ax, (question, axis) in zip(figure.axes, panels):
        ticks, names = [], []
        row = 0
        for level in levels[axis]:
            for source in sources:
                part = shares[(shares["question"].astype(str) == question) & (shares["axis"] == axis)
                              & (shares["level"] == level) & (shares["source"].astype(str) == source)]
                part = part.sort_values("position", kind="stable")
                left = 0.0
                for option, label, share, n in zip(part["option"], part["label"], part["share"], part["n_units"]):
                    if not np.isfinite(share):
                        continue
                    ax.barh(-row, share, left=left, height=0.8, color=colour_of[label], edgecolor="white",
                            linewidth=0.2)
                    records.append({"question": question, "axis": axis, "level": level, "source": source,
                                    "option": option, "label": label, "share": float(share), "left": left,
                                    "row": -row, "n_units": int(n)})
                    left += share
                size = int(part["n_units"].iloc[0]) if len(part) else 0
                ticks.append(-row)
                names.append(f"{level} (n={size})" if source == "human" else f"{_short(source)} (n={size})")
                row += 1
            ax.axhline(-row + 0.5, color="0.4", linewidth=0.4)
        ax.set_yticks(ticks, names, fontsize=3.5)
        ax.set_ylim(-row + 0.5, 0.5)
        ax.set_xlim(0, 1)
        ax.set_title(f"{question} by {axis}", loc="left", fontsize=6)
    for k, ax in enumerate(figure.axes[:len(panels)]):
        if k + ncols >= len(panels):  # the lowest panel of its column
            ax.set_xlabel("share (0-1)")
            ax.tick_params(axis="x", labelbottom=True)
    option_legend(figure, colour_of)
    caption = (f"Answer shares by group: for each question and grouping axis (a panel each), every group's "
               f"real answer shares (first bar of a group, labelled with the level and its number of "
               f"respondents) beside each model x condition (below it, named without the provider route, "
               f"with its number of personas); options coloured by label as in the legend. Point estimates; "
               f"intervals and signed gaps in the report's group table. n = {len(questions)} questions, "
               f"{len(axes_names)} axes, "
               f"{len(sources) - ('human' in sources)} model source(s).")
    return PaperFigure("survey_group_shares", figure, caption, pd.DataFrame(records))
