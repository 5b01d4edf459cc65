"""One figure style for every pvsst figure: Okabe-Ito colours, single-column size, PNG + PDF output.

Okabe & Ito (2008), "Color Universal Design": eight colours distinguishable under the common forms of
colour-vision deficiency. Figures are sized for a single journal column (3.4 in wide) with 8 pt text,
and every figure is a :class:`PaperFigure`: the matplotlib figure, its axes (so tests can read back the
plotted values), the table it plots, and a caption that states n and the CI method.

Examples
--------
>>> figure = new_figure(height=2.0)
>>> figure.get_size_inches().tolist()
[3.4, 2.0]
>>> color_for("likes", ["control", "likes"]) == OKABE_ITO[1]
True
"""
from __future__ import annotations

import functools
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # figures are files; never open a window

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, MaxNLocator  # noqa: E402

from pvsst.analysis.survey.cells.mrp import MRP  # noqa: E402
from pvsst.analysis.survey.cells.state_scores import CELL_ORACLE, NATIONAL_MARGINAL, UNIFORM  # noqa: E402
from pvsst.core.atomic import atomic_file  # noqa: E402

OKABE_ITO = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
"""Black, orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple."""
ARM_ORDER = ("control", "likes", "likes_hidden", "unranked", "follows_chronological", "single_source",
             "distributed_sources")
# Yellow is hard to read as a thin line on white: arms take the other seven colours first.
LINE_COLORS = tuple(c for c in OKABE_ITO if c != "#F0E442") + ("#F0E442",)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
COLUMN_WIDTH_IN = 3.4
WIDE_IN = 7.0  # double column: figures that hold every question or state at once
DEFAULT_HEIGHT_IN = 2.4
DPI = 300
FIGURE_FORMATS = ("png", "pdf")
STANCE_CMAP = "PuOr"  # ColorBrewer diverging, colour-blind safe: orange = oppose (-3), purple = support (+3)
DIVERGING_CMAP = STANCE_CMAP  # signed values centred at 0 (errors)
SEQUENTIAL_CMAP = "cividis"  # ordered values (shares, distances): perceptually uniform, colour-blind safe
CATEGORY_PALETTE = "tab20"  # unordered option labels (more of them than Okabe-Ito has colours)
NO_VALUE_GREY = "0.85"  # a tile or cell without a value
NULL_BAND_GREY = "#BBBBBB"  # the range of a null distribution drawn behind the points

RC_PARAMS = {
    "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7,
    "legend.fontsize": 7, "legend.frameon": False, "axes.spines.top": False, "axes.spines.right": False,
    "lines.linewidth": 1.2, "lines.markersize": 4, "errorbar.capsize": 2, "pdf.fonttype": 42,
    "savefig.bbox": "tight", "savefig.pad_inches": 0.02,
}
# Saved canvases are cut to the drawn artists plus this margin (inches). Figures are built under
# RC_PARAMS but saved later, outside that context, so the saving code passes the setting itself: a
# fixed canvas cut every text that constrained layout let run past the figure's edge (an x-axis label
# centred under axes pushed right by long tick labels, a tick label at the left edge).
SAVE_PAD_IN = 0.03


@dataclass
class PaperFigure:
    """A finished figure: the matplotlib objects, the plotted table and the caption.

    ``name`` is the file stem (``figures/<name>.png``); ``data`` holds exactly the values drawn.
    """

    name: str
    figure: Figure
    caption: str
    data: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def axes(self) -> list:
        return list(self.figure.axes)

    def png_bytes(self) -> bytes:
        """The figure as PNG bytes (for embedding in HTML)."""
        buffer = io.BytesIO()
        save_figure(self.figure, buffer, "png")
        return buffer.getvalue()

    def save(self, directory: str | Path, formats: Sequence[str] = FIGURE_FORMATS) -> list[Path]:
        """Write ``<directory>/<name>.<fmt>`` for each format (each via a temp file renamed into place)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        paths = []
        for fmt in formats:
            target = directory / f"{self.name}.{fmt}"
            with atomic_file(target) as temp:
                save_figure(self.figure, temp, fmt)
            paths.append(target)
        return paths

    def close(self) -> None:
        plt.close(self.figure)


def save_figure(figure: Figure, target, fmt: str) -> None:
    """Write ``figure`` to ``target`` (a path or a binary file) as ``fmt``: the one place pvsst saves a figure.

    The canvas is the bounding box of everything drawn plus :data:`SAVE_PAD_IN`, so no text is ever
    cut at the edge, whatever rcParams are active when the figure is saved.

    Examples
    --------
    >>> buffer = io.BytesIO()
    >>> save_figure(new_figure(), buffer, "png")
    >>> buffer.getvalue()[:4]
    b'\\x89PNG'
    """
    figure.savefig(target, format=fmt, dpi=DPI, bbox_inches="tight", pad_inches=SAVE_PAD_IN)


def in_style(function: Callable[..., PaperFigure]) -> Callable[..., PaperFigure]:
    """Decorator: build the figure under the pvsst rcParams (fonts, spines, caps), whatever the globals."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with plt.rc_context(RC_PARAMS):
            return function(*args, **kwargs)
    return wrapper


def new_figure(width: float = COLUMN_WIDTH_IN, height: float = DEFAULT_HEIGHT_IN, nrows: int = 1,
               ncols: int = 1, **subplot_kwargs) -> Figure:
    """A figure with ``nrows x ncols`` axes (read them back from ``figure.axes``), constrained layout.

    Call it inside a function decorated with :func:`in_style` so text takes the pvsst sizes.
    """
    figure = plt.figure(figsize=(width, height), layout="constrained")
    figure.subplots(nrows, ncols, squeeze=False, **subplot_kwargs)
    return figure


def legend_above(figure: Figure, ax) -> None:
    """One legend for the figure, above the axes (it never hides data)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        figure.legend(handles, labels, loc="outside upper center", ncols=min(len(labels), 3), fontsize=6)


def ordered_arms(arms: Sequence[str]) -> list[str]:
    """Arms in the canonical order (control first), unknown arms after, alphabetically."""
    arms = list(dict.fromkeys(str(a) for a in arms))
    known = [a for a in ARM_ORDER if a in arms]
    return known + sorted(a for a in arms if a not in known)


def color_for(item: str, items: Sequence[str]) -> str:
    """The colour of ``item`` given every item of the figure (stable across figures of one report)."""
    order = ordered_arms(items)
    return LINE_COLORS[order.index(str(item)) % len(LINE_COLORS)]


def marker_for(item: str, items: Sequence[str]) -> str:
    """The marker of ``item`` given every item of the figure (paired with :func:`color_for`)."""
    order = ordered_arms(items)
    return MARKERS[order.index(str(item)) % len(MARKERS)]


@dataclass(frozen=True)
class SeriesStyle:
    """How one series is drawn: a colour and a marker, open (hollow) for a yardstick or control."""

    color: str
    marker: str
    hollow: bool = False

    def errorbar(self) -> dict:
        """Keyword arguments of ``Axes.errorbar``."""
        return {"fmt": self.marker, "color": self.color, "markerfacecolor": "white" if self.hollow else self.color}

    def scatter(self) -> dict:
        """Keyword arguments of ``Axes.scatter``."""
        if self.hollow:
            return {"marker": self.marker, "facecolors": "none", "edgecolors": self.color}
        return {"marker": self.marker, "color": self.color}


YARDSTICK_STYLES = {
    CELL_ORACLE: SeriesStyle(OKABE_ITO[0], "o", hollow=True),
    MRP: SeriesStyle(OKABE_ITO[3], "D", hollow=True),
    NATIONAL_MARGINAL: SeriesStyle(OKABE_ITO[5], "X"),
    UNIFORM: SeriesStyle(OKABE_ITO[7], "P"),
}
"""The survey yardsticks look the same in every figure (the cell oracle: open black circles)."""


def series_styles(names: Sequence[str], *, fixed: dict[str, SeriesStyle] | None = None,
                  hollow: Sequence[str] = ()) -> dict[str, SeriesStyle]:
    """A colour and a marker for each series, so that no two series of a legend share either.

    Yardsticks (:data:`YARDSTICK_STYLES`) and the ``fixed`` styles keep their look; every other name
    takes, in order, the next colour and marker neither of them uses (``hollow`` names drawn open).
    Up to seven other series (eight markers and colours) are told apart by both.

    Examples
    --------
    >>> styles = series_styles(["model a", "cell_oracle", "model b"], hollow=["model b"])
    >>> [(s.color, s.marker, s.hollow) for s in styles.values()]
    [('#E69F00', 's', False), ('#000000', 'o', True), ('#56B4E9', '^', True)]
    """
    fixed = {**YARDSTICK_STYLES, **(fixed or {})}
    names = list(dict.fromkeys(str(n) for n in names))
    taken = {n: fixed[n] for n in names if n in fixed}
    colours = [c for c in LINE_COLORS if c not in {s.color for s in taken.values()}] or list(LINE_COLORS)
    markers = [m for m in MARKERS if m not in {s.marker for s in taken.values()}] or list(MARKERS)
    free = [n for n in names if n not in taken]
    taken.update({n: SeriesStyle(colours[i % len(colours)], markers[i % len(markers)], hollow=n in set(hollow))
                  for i, n in enumerate(free)})
    return {n: taken[n] for n in names}


def colour_range(low: float, high: float) -> tuple[float, float]:
    """A colour scale's range: the data's, widened about its centre where it is too narrow for the ticks
    of :func:`readable_colorbar` (at most 3 significant digits) to tell apart.

    Examples
    --------
    >>> colour_range(0.2, 0.6)
    (0.2, 0.6)
    >>> [round(v, 6) for v in colour_range(0.417408528442980042, 0.417408528442980042)]
    [0.414909, 0.419909]
    """
    magnitude = max(abs(low), abs(high))
    if magnitude < 1e-9:
        return -1.0, 1.0
    width = 5 * 10 ** (math.floor(math.log10(magnitude)) - 2)
    if high - low >= width:
        return float(low), float(high)
    centre = (low + high) / 2
    return centre - width / 2, centre + width / 2


def tick_label(value: float, _position=None) -> str:
    """A tick label of at most 3 significant digits (``0.4174`` -> ``0.417``), with a true minus sign.

    >>> tick_label(0.417408528442980042), tick_label(-0.15), tick_label(2.0)
    ('0.417', '\u22120.15', '2')
    """
    return f"{value:.3g}".replace("-", "\u2212")


def readable_colorbar(bar) -> None:
    """Ticks a reader can use on a colour bar: two to six of them, at round values, each labelled with at
    most 3 significant digits (pair with :func:`colour_range`)."""
    bar.locator = MaxNLocator(nbins=5, steps=[1, 2, 5, 10])
    bar.formatter = FuncFormatter(tick_label)
    bar.update_ticks()


METRIC_UNITS = {
    "final_honest_pairwise_similarity": "TF-IDF cosine", "pairwise_similarity": "TF-IDF cosine",
    "initial_alignment": "stance points", "final_alignment": "stance points",
    "delta_alignment": "stance points", "alignment": "stance points",
    "final_pushed_side_share": "share of agents", "toward_push_share": "share of agents",
    "opposite_side_survival": "share of agents", "majority_capture": "share of trials",
    "parse_error_rate": "share of calls", "vote_parse_error_rate": "share of calls",
}


def metric_unit(metric: str) -> str:
    """The unit a metric is measured in (for axis labels).

    >>> metric_unit("delta_alignment")
    'stance points'
    """
    return METRIC_UNITS.get(str(metric), "metric units")


def pretty_label(name: str) -> str:
    """``final_honest_pairwise_similarity`` -> ``final honest pairwise similarity``."""
    return str(name).replace("_", " ")

