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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # figures are files; never open a window

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from pvsst.core.atomic import atomic_file  # noqa: E402

OKABE_ITO = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
"""Black, orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple."""
ARM_ORDER = ("control", "likes", "likes_hidden", "unranked", "follows_chronological", "single_source",
             "distributed_sources")
# Yellow is hard to read as a thin line on white: arms take the other seven colours first.
LINE_COLORS = tuple(c for c in OKABE_ITO if c != "#F0E442") + ("#F0E442",)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
COLUMN_WIDTH_IN = 3.4
DEFAULT_HEIGHT_IN = 2.4
DPI = 300
FIGURE_FORMATS = ("png", "pdf")
STANCE_CMAP = "PuOr"  # ColorBrewer diverging, colour-blind safe: orange = oppose (-3), purple = support (+3)

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
    order = ordered_arms(items)
    return MARKERS[order.index(str(item)) % len(MARKERS)]


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

