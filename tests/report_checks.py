"""Checks on what the reports draw: HTML that holds every image it shows, figure texts that stay on the
saved canvas, and figures a reader can decode (legend entries told apart, colour bars with readable
ticks, numeric axes labelled)."""
from __future__ import annotations

import base64
import re

import matplotlib.text
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.colors import to_rgb
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TOLERANCE_PX = 0.5  # text extents are float: half a pixel over the edge is not a clip


def texts_outside_canvas(monkeypatch, save) -> list[str]:
    """Run ``save()`` and return every text whose window extent leaves the PNG canvas it was drawn on.

    Saving with a tight canvas draws twice (once to measure, once onto the cut canvas); only each
    figure's last drawing is the saved one, so only that one is checked. A problem names its figure by
    the figure's ``_pvsst_name`` as it is when ``save()`` returns (so ``save`` may build the figures,
    save them and name them).
    """
    drawn: list[tuple[object, int, str]] = []  # (figure, renderer id, problem without the figure name, or "")
    original = matplotlib.text.Text.draw

    def recording_draw(self, renderer):
        original(self, renderer)
        if not (isinstance(renderer, RendererAgg) and self.get_visible() and self.get_text().strip()):
            return
        box = self.get_window_extent(renderer)
        problem = ""
        if (box.x0 < -TOLERANCE_PX or box.y0 < -TOLERANCE_PX or box.x1 > renderer.width + TOLERANCE_PX
                or box.y1 > renderer.height + TOLERANCE_PX):
            problem = (f"{self.get_text()!r} at {tuple(round(v) for v in box.bounds)} "
                       f"on {renderer.width}x{renderer.height}")
        drawn.append((self.figure, id(renderer), problem))

    monkeypatch.setattr(matplotlib.text.Text, "draw", recording_draw)
    try:
        save()
    finally:
        monkeypatch.undo()
    last = {id(figure): renderer for figure, renderer, _ in drawn}
    return [f"{getattr(figure, '_pvsst_name', '?')}: {problem}" for figure, renderer, problem in drawn
            if problem and last[id(figure)] == renderer]


def html_images(html: str) -> list[str]:
    """The ``src`` of every ``<img>`` in ``html``, in order."""
    return re.findall(r"<img[^>]*\ssrc=\"([^\"]*)\"", html)


def assert_self_contained(html: str, n_figures: int) -> None:
    """``html`` shows ``n_figures`` images, each an embedded PNG, and links to nothing outside the file
    (a report must open anywhere, sent as one file)."""
    sources = html_images(html)
    assert len(sources) == n_figures > 0
    for src in sources:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == PNG_MAGIC
    assert not re.findall(r"(?:src|href)=\"(?!data:|#)", html)  # nothing outside the file


def legend_entries(figure) -> list[tuple[str, tuple, str]]:
    """``(label, rgb, marker)`` of every legend entry of ``figure`` (figure and axes legends).

    The style is read from the artist the entry stands for (found by its label among the axes' handles):
    an errorbar's data line, a line, a scatter (its edge colour when hollow), a patch. ``marker`` is the
    marker's shape (its path for a scatter), ``line<style>`` for a line without markers and ``patch`` for
    a filled area.
    """
    originals = {}
    for ax in figure.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            originals.setdefault(label, handle)
    legends = list(figure.legends) + [ax.get_legend() for ax in figure.axes if ax.get_legend() is not None]
    entries = []
    for legend in legends:
        for drawn, text in zip(legend.legend_handles, legend.get_texts()):
            label = text.get_text()
            entries.append((label, *_style(originals.get(label, drawn))))
    return entries


def _style(handle) -> tuple[tuple, str]:
    if isinstance(handle, ErrorbarContainer):
        handle = handle.lines[0]
    if isinstance(handle, BarContainer):
        handle = handle.patches[0]
    if isinstance(handle, Line2D):
        marker = handle.get_marker()
        shape = str(marker) if marker not in (None, "None", "", " ") else f"line{handle.get_linestyle()}"
        return _rgb(handle.get_color()), shape
    if isinstance(handle, PathCollection):
        faces, edges = handle.get_facecolors(), handle.get_edgecolors()
        hollow = len(faces) == 0 or faces[0][3] == 0
        colour = edges[0] if hollow and len(edges) else faces[0]
        path = handle.get_paths()[0]
        return _rgb(colour), "path" + ",".join(f"{v:.2f}" for v in path.vertices.ravel())
    if isinstance(handle, Patch):
        return _rgb(handle.get_facecolor()), "patch"
    if isinstance(handle, LineCollection):
        return _rgb(handle.get_colors()[0]), f"line{handle.get_linestyles()[0]}"
    raise AssertionError(f"unknown legend handle {type(handle).__name__}")


def _rgb(colour) -> tuple:
    return tuple(round(v, 3) for v in to_rgb(colour))


MIN_COLOUR_DISTANCE = 0.15  # in RGB (0-1 per channel): two greys 0.15 apart still read as different


def legend_problems(name: str, figure) -> list[str]:
    """Entries of one legend that share a colour (closer than :data:`MIN_COLOUR_DISTANCE`) or a marker.

    Filled areas (patches) are told apart by colour alone; lines without markers by colour and style."""
    entries = legend_entries(figure)
    problems = []
    for i, (label, colour, marker) in enumerate(entries):
        for other, other_colour, other_marker in entries[i + 1:]:
            if sum((a - b) ** 2 for a, b in zip(colour, other_colour)) ** 0.5 < MIN_COLOUR_DISTANCE:
                problems.append(f"{name}: {label!r} and {other!r} have one colour {colour}")
            if marker == other_marker and marker != "patch":
                problems.append(f"{name}: {label!r} and {other!r} have one marker")
    return problems


def significant_digits(text: str) -> int | None:
    """Significant digits of a tick label (``'0.425'``: 3, ``'120'``: 2); None when it is not a plain number.

    >>> significant_digits("0.400"), significant_digits("\u22120.15"), significant_digits("0.417408528")
    (3, 2, 9)
    """
    match = re.fullmatch(r"[-\u2212]?(\d*)(?:\.(\d+))?", text)
    if not match or not (match[1] or match[2]):
        return None
    digits = (match[1] + (match[2] or "")).lstrip("0")
    return max(len(digits if match[2] else digits.rstrip("0")), 1)


def colorbar_problems(name: str, figure) -> list[str]:
    """Colour bars with fewer than two distinct tick labels, or a label of more than 3 significant digits."""
    problems = []
    for ax in figure.axes:
        if ax.get_label() != "<colorbar>":
            continue
        labels = [t.get_text() for t in (*ax.get_yticklabels(), *ax.get_xticklabels()) if t.get_text()]
        if len(labels) < 2 or len(set(labels)) < len(labels):
            problems.append(f"{name}: colour bar ticks {labels}")
        problems += [f"{name}: colour bar tick {text!r} is not a number of at most 3 significant digits"
                     for text in labels if (significant_digits(text) or 99) > 3]
    return problems


def axis_label_problems(name: str, figure) -> list[str]:
    """Axes whose numeric tick labels have no axis label (on the axes or on a panel sharing that axis).

    Tick labels that are words (questions, arms, groups) name themselves."""
    problems = []
    for ax in figure.axes:
        if ax.get_label() == "<colorbar>" or not ax.get_visible() or not ax.axison:
            continue
        for axis, ticks, label, shared in (("x", ax.get_xticklabels(), ax.get_xlabel, ax.get_shared_x_axes()),
                                           ("y", ax.get_yticklabels(), ax.get_ylabel, ax.get_shared_y_axes())):
            numeric = [t.get_text() for t in ticks if t.get_visible() and _is_number(t.get_text())]
            siblings = [getattr(s, f"get_{axis}label")() for s in shared.get_siblings(ax)]
            if numeric and not label().strip() and not any(s.strip() for s in siblings):
                problems.append(f"{name}: {axis} axis with ticks {numeric[:3]} has no label")
    return problems


def _is_number(text: str) -> bool:
    try:
        float(text.replace("\u2212", "-"))
    except ValueError:
        return False
    return True
