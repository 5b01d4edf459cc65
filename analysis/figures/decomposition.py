"""The decomposition figure: each factor's share of the explained variation, and its average marginal effects.

Reads the two tables of :func:`pvsst.analysis.scenarios.decomposition.decompose` (``shares``: factor, contribution,
contribution_low, contribution_high, ...; ``effects``: factor, level, reference, ame, ame_low, ame_high).
Left panel: each factor's contribution to McFadden's R-squared with its interval, largest first.
Right panel: the average marginal effect of each level against its factor's reference level, in
percentage points of P(yes), with the zero line.

Examples
--------
>>> import pandas as pd
>>> shares = pd.DataFrame({"factor": ["income", "sex", "all factors"], "contribution": [0.18, 0.001, 0.181],
...                        "contribution_low": [0.15, -0.002, 0.15], "contribution_high": [0.21, 0.003, 0.21],
...                        "share": [0.99, 0.01, 1.0]})
>>> effects = pd.DataFrame({"factor": ["income", "sex"], "level": ["high", "m"], "reference": ["low", "f"],
...                         "ame": [0.5, 0.0], "ame_low": [0.45, -0.04], "ame_high": [0.55, 0.04]})
>>> figure = decomposition_figure(shares, effects, caption_note="planted")
>>> figure.data["factor"].tolist()
['income', 'sex', 'income', 'sex']
>>> figure.close()
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.figures.style import OKABE_ITO, PaperFigure, in_style, new_figure, pretty_label
from pvsst.core.errors import InputError

TOTAL = "all factors"


def _text(label: str) -> str:
    """A label drawn as written: a dollar sign would start matplotlib's math mode."""
    return str(label).replace("$", r"\$")


def _require(table: pd.DataFrame, columns, name: str) -> None:
    for column in columns:
        if column not in table.columns:
            raise InputError(name, column, "missing column")


@in_style
def decomposition_figure(shares: pd.DataFrame, effects: pd.DataFrame, caption_note: str = "") -> PaperFigure:
    """Contributions (left) and average marginal effects (right); ``data`` has one row per drawn point
    (``panel``: ``contribution`` or ``ame``; factor, label, value, low, high)."""
    _require(shares, ("factor", "contribution", "contribution_low", "contribution_high", "share"), "shares")
    _require(effects, ("factor", "level", "reference", "ame", "ame_low", "ame_high"), "effects")
    factors = shares[shares["factor"] != TOTAL].sort_values("contribution", ascending=False, kind="stable")
    order = factors["factor"].tolist()
    effects = effects.assign(_rank=effects["factor"].map({f: i for i, f in enumerate(order)})).sort_values(
        ["_rank"], kind="stable")
    figure = new_figure(width=6.8, height=0.6 + 0.22 * max(len(order), len(effects)), ncols=2)
    left, right = figure.axes
    y = -np.arange(len(order), dtype=float)
    value = factors["contribution"].to_numpy(float)
    low, high = factors["contribution_low"].to_numpy(float), factors["contribution_high"].to_numpy(float)
    left.barh(y, value, color=OKABE_ITO[5], height=0.6)
    # intervals drawn from low to high: a basic bootstrap interval need not contain its estimate
    if np.isfinite(low).any():
        left.hlines(y, low, high, color=OKABE_ITO[0], linewidth=0.8)
    left.set_yticks(y, [_text(f"{pretty_label(f)} ({s:.0%})") for f, s in zip(order, factors["share"])])
    left.axvline(0, color="0.5", linewidth=0.5)
    left.set_xlabel("contribution to McFadden R\u00b2")
    ey = -np.arange(len(effects), dtype=float)
    ame = 100 * effects["ame"].to_numpy(float)
    ame_low, ame_high = 100 * effects["ame_low"].to_numpy(float), 100 * effects["ame_high"].to_numpy(float)
    if np.isfinite(ame_low).any():
        right.hlines(ey, ame_low, ame_high, color=OKABE_ITO[0], linewidth=0.8)
    right.plot(ame, ey, "o", color=OKABE_ITO[6])
    labels = [f"{pretty_label(f)}: {lvl} vs {ref}" for f, lvl, ref in
              zip(effects["factor"], effects["level"].astype(str), effects["reference"].astype(str))]
    right.set_yticks(ey, [_text(label) for label in labels])
    right.axvline(0, color="0.5", linewidth=0.5)
    right.set_xlabel("average marginal effect (points of P(yes))")
    total = shares.loc[shares["factor"] == TOTAL, "contribution"]
    r2 = f"; all factors together R\u00b2 = {float(total.iloc[0]):.3f}" if len(total) else ""
    caption = ("Share of the variation in the decision explained by each factor (bars: contribution to McFadden's "
               f"R\u00b2, label: share of the explained part{r2}) and average marginal effects of each level; "
               f"bars and whiskers are bootstrap intervals. {caption_note}").strip()
    data = pd.concat([
        pd.DataFrame({"panel": "contribution", "factor": order, "label": order, "value": value, "low": low,
                      "high": high}),
        pd.DataFrame({"panel": "ame", "factor": effects["factor"].to_numpy(), "label": labels, "value": ame / 100,
                      "low": ame_low / 100, "high": ame_high / 100})], ignore_index=True)
    return PaperFigure(name="decomposition", figure=figure, caption=caption, data=data)
