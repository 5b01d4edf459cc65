"""State figures: a tile-grid map of a value per state, simulated against real state shares, per-group errors.

The tile map draws the 50 states and DC as equal squares in a fixed grid that keeps each state near its
neighbours (the layout of geofacet's ``us_state_grid1``, Hafen 2019, R package geofacet): no geodata,
and small states are as visible as large ones. A state without a value is a hatched grey tile.

Examples
--------
>>> values = pd.Series({"OH": 0.52, "TX": 0.55, "CA": 0.33})
>>> figure = state_tile_map_figure(values, label="Trump vote share")
>>> len(figure.data), int(figure.data["value"].notna().sum())
(51, 3)
>>> figure.close()
"""
from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.patches import Rectangle

from pvsst.analysis.figures.style import (
    DIVERGING_CMAP,
    NO_VALUE_GREY,
    SEQUENTIAL_CMAP,
    WIDE_IN,
    YARDSTICK_STYLES,
    PaperFigure,
    colour_range,
    in_style,
    new_figure,
    readable_colorbar,
    series_styles,
)
from pvsst.analysis.stats.paired import require_columns
from pvsst.core.errors import InputError
from pvsst.personas.geography import STATE_CODE_OF_NAME, STATE_CODES

# (row, column) of each tile, row 0 at the top.
TILE_LAYOUT: dict[str, tuple[int, int]] = {
    "AK": (0, 0), "ME": (0, 10),
    "WI": (1, 5), "VT": (1, 9), "NH": (1, 10),
    "WA": (2, 0), "ID": (2, 1), "MT": (2, 2), "ND": (2, 3), "MN": (2, 4), "IL": (2, 5), "MI": (2, 6),
    "NY": (2, 8), "MA": (2, 9),
    "OR": (3, 0), "NV": (3, 1), "WY": (3, 2), "SD": (3, 3), "IA": (3, 4), "IN": (3, 5), "OH": (3, 6),
    "PA": (3, 7), "NJ": (3, 8), "CT": (3, 9), "RI": (3, 10),
    "CA": (4, 0), "UT": (4, 1), "CO": (4, 2), "NE": (4, 3), "MO": (4, 4), "KY": (4, 5), "WV": (4, 6),
    "VA": (4, 7), "MD": (4, 8), "DE": (4, 9),
    "AZ": (5, 1), "NM": (5, 2), "KS": (5, 3), "AR": (5, 4), "TN": (5, 5), "NC": (5, 6), "SC": (5, 7),
    "DC": (5, 8),
    "OK": (6, 3), "LA": (6, 4), "MS": (6, 5), "AL": (6, 6), "GA": (6, 7),
    "HI": (7, 0), "TX": (7, 3), "FL": (7, 8),
}


def state_code(state) -> str:
    """A postal code from a code or a full name (``"Ohio"`` -> ``"OH"``); InputError for anything else.

    Examples
    --------
    >>> state_code("Ohio"), state_code("oh")
    ('OH', 'OH')
    """
    text = str(state).strip()
    code = STATE_CODE_OF_NAME.get(text, text.upper())
    if code not in TILE_LAYOUT:
        raise InputError("states", "state", f"unknown state {state!r} (use a postal code or a full name)")
    return code


def _by_code(values: pd.Series) -> pd.Series:
    out = pd.Series({state_code(k): float(v) for k, v in values.items()}, dtype=float)
    if out.index.duplicated().any():
        raise InputError("states", "state", f"state {out.index[out.index.duplicated()][0]!r} given twice")
    return out


@in_style
def state_tile_map_figure(values: pd.Series, *, label: str, diverging: bool = False, name: str = "state_tile_map",
                          caption: str | None = None) -> PaperFigure:
    """A value per state (index: postal codes or names) on the tile grid, with a colour bar.

    ``diverging``: a diverging colour map centred at 0 (for errors); otherwise sequential.
    ``data``: state, row, column, value (NaN: no value).
    """
    if len(values) == 0:
        raise InputError("states", "values", "no state has a value")
    by_code = _by_code(values)
    finite = by_code[np.isfinite(by_code)]
    if diverging:
        bound = float(np.abs(finite).max()) if len(finite) else 0.0
        norm = mpl.colors.Normalize(*colour_range(-bound, bound))
        cmap = mpl.colormaps[DIVERGING_CMAP]
    else:
        low, high = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
        norm = mpl.colors.Normalize(*colour_range(low, high))
        cmap = mpl.colormaps[SEQUENTIAL_CMAP]
    figure = new_figure(width=WIDE_IN * 0.62, height=2.7)
    ax = figure.axes[0]
    rows = []
    for code in STATE_CODES:
        row, col = TILE_LAYOUT[code]
        value = by_code.get(code, np.nan)
        known = bool(np.isfinite(value))
        colour = cmap(norm(value)) if known else NO_VALUE_GREY
        ax.add_patch(Rectangle((col, -row), 0.92, 0.92, facecolor=colour, edgecolor="white", linewidth=0.5,
                               hatch=None if known else "////", gid=f"tile-{code}"))
        dark = known and np.mean(mpl.colors.to_rgb(colour)) < 0.5
        ax.text(col + 0.46, -row + 0.46, code, ha="center", va="center", fontsize=5.5,
                color="white" if dark else "black")
        rows.append({"state": code, "row": row, "column": col, "value": value})
    ax.set_xlim(-0.1, 11.0)
    ax.set_ylim(-7.1, 1.0)
    ax.set_aspect("equal")
    ax.axis("off")
    bar = figure.colorbar(mpl.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.8, aspect=25)
    readable_colorbar(bar)
    bar.set_label(label)
    missing = int(len(STATE_CODES) - len(finite))
    caption = caption or (f"{label} per state (tile grid: 50 states and DC as equal squares). "
                          f"n = {len(finite)} states with a value"
                          + (f"; {missing} hatched: no value." if missing else "."))
    return PaperFigure(name, figure, caption, pd.DataFrame(rows))


@in_style
def state_scatter_figure(options: pd.DataFrame, option: str, *, sources=None, name: str | None = None) -> PaperFigure:
    """Simulated against real state shares of one option, one colour and marker per source, with the identity line.

    ``options``: source, state, option, simulated, real (:class:`pvsst.analysis.survey.cells.state_scores.StateScores`
    ``options``). ``sources``: which to draw, in legend order (default: every source, so the model(s),
    the cell oracle, MRP, the national marginal and uniform). The yardsticks keep one look in every figure
    (:data:`~pvsst.analysis.figures.style.YARDSTICK_STYLES`: the cell oracle in open black circles); no
    two sources share a colour or a marker. ``data``: the plotted rows.
    """
    require_columns(options, ("source", "state", "option", "simulated", "real"), "state scores")
    part = options[options["option"].astype(str) == str(option)]
    if part.empty:
        raise InputError("state scores", "option", f"no rows for option {option!r}")
    sources = list(dict.fromkeys(part["source"].astype(str))) if sources is None else [str(s) for s in sources]
    part = part[part["source"].astype(str).isin(sources)]
    figure = new_figure(height=3.0)
    ax = figure.axes[0]
    values = part[["simulated", "real"]].to_numpy(dtype=float)
    low, high = float(np.nanmin(values)), float(np.nanmax(values))
    pad = 0.03 * max(high - low, 0.05)
    ax.plot([low - pad, high + pad], [low - pad, high + pad], color="0.5", linewidth=0.8, linestyle="--",
            label="identity (simulated = real)", gid="identity")
    for source, style in series_styles(sources).items():
        points = part[part["source"].astype(str) == source]
        ax.scatter(points["real"], points["simulated"], s=9, linewidths=0.6, label=source, gid=f"points-{source}",
                   **style.scatter())
    ax.set_xlabel(f"real share of '{option}' (survey, per state)")
    ax.set_ylabel(f"simulated share of '{option}'")
    ax.set_aspect("equal", adjustable="datalim")
    handles, labels = ax.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside upper center", ncols=2, fontsize=6)
    n_states = part["state"].nunique()
    drawn = [s for s in YARDSTICK_STYLES if s in sources]
    yardsticks = {"cell_oracle": "the cell oracle (open black circles: the survey's own answers per cell, "
                                 "post-stratified with the census counts) is a reference, not a ceiling: the "
                                 "national marginal can beat it",
                  "mrp": "MRP (open green diamonds: a logistic model of the survey's answers on the cell "
                         "attributes with region and state effects, each state fitted without its own "
                         "respondents, post-stratified with the census counts) is a reference, not a ceiling",
                  "national_marginal": "the national marginal answers every state with the nation's shares",
                  "uniform": "uniform puts equal weight on every option"}
    caption = (f"Simulated against real state shares of '{option}', one point per state and source (n = "
               f"{n_states} states), each source in its own colour and marker. The dashed identity line is a "
               f"perfect simulator" + "".join(f"; {yardsticks[s]}" for s in drawn) + ". Point estimates.")
    return PaperFigure(name or f"state_scatter_{option}", figure, caption, part.reset_index(drop=True))


@in_style
def group_errors_figure(errors: pd.DataFrame, *, value: str = "abs_error", label: str = "absolute error of the share",
                        name: str = "group_errors") -> PaperFigure:
    """A dot per group and source: the error of each source's group estimate (rows: groups).

    ``errors``: group, source, and ``value`` (optionally ci_low, ci_high drawn as bars). ``data``: the rows drawn.

    Examples
    --------
    >>> errors = pd.DataFrame({"group": ["party=Democrat", "party=Republican"] * 2,
    ...                        "source": ["model"] * 2 + ["uniform"] * 2, "abs_error": [0.05, 0.10, 0.4, 0.3]})
    >>> figure = group_errors_figure(errors)
    >>> len(figure.axes[0].collections) >= 2
    True
    >>> figure.close()
    """
    require_columns(errors, ("group", "source", value), "group errors")
    if errors.empty:
        raise InputError("group errors", "rows", "no rows")
    groups = list(dict.fromkeys(errors["group"].astype(str)))
    sources = list(dict.fromkeys(errors["source"].astype(str)))
    figure = new_figure(height=0.7 + 0.18 * len(groups) * max(1, len(sources) / 3))
    ax = figure.axes[0]
    step = 0.6 / max(len(sources), 1)
    for k, (source, style) in enumerate(series_styles(sources).items()):
        part = errors[errors["source"].astype(str) == source]
        y = -np.array([groups.index(str(g)) for g in part["group"]], dtype=float) + ((len(sources) - 1) / 2 - k) * step
        x = part[value].to_numpy(dtype=float)
        if {"ci_low", "ci_high"} <= set(part.columns):
            ax.errorbar(x, y, xerr=[np.clip(x - part["ci_low"].to_numpy(float), 0, None),
                                    np.clip(part["ci_high"].to_numpy(float) - x, 0, None)],
                        fmt="none", ecolor=style.color, elinewidth=0.6)
        ax.scatter(x, y, s=10, label=source, **style.scatter())
    ax.set_yticks(-np.arange(len(groups), dtype=float), groups)
    ax.set_xlabel(label)
    ax.axvline(0, color="0.6", linewidth=0.5)
    handles, labels = ax.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside upper center", ncols=min(len(labels), 3), fontsize=6)
    caption = (f"{label.capitalize()} per group (rows) and source (markers). n = {len(groups)} groups, "
               f"{len(sources)} sources" + ("; bars: intervals given with the errors." if "ci_low" in errors else "."))
    return PaperFigure(name, figure, caption, errors.reset_index(drop=True))
