"""Checks on what the reports draw: HTML that holds every image it shows, and figure texts that stay on
the saved canvas."""
from __future__ import annotations

import base64
import re

import matplotlib.text
from matplotlib.backends.backend_agg import RendererAgg

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TOLERANCE_PX = 0.5  # text extents are float: half a pixel over the edge is not a clip


def texts_outside_canvas(monkeypatch, save) -> list[str]:
    """Run ``save()`` and return every text whose window extent leaves the PNG canvas it was drawn on.

    Saving with a tight canvas draws twice (once to measure, once onto the cut canvas); only each
    figure's last drawing is the saved one, so only that one is checked.
    """
    drawn: list[tuple[int, int, str]] = []  # (figure id, renderer id, problem or "")
    original = matplotlib.text.Text.draw

    def recording_draw(self, renderer):
        original(self, renderer)
        if not (isinstance(renderer, RendererAgg) and self.get_visible() and self.get_text().strip()):
            return
        box = self.get_window_extent(renderer)
        problem = ""
        if (box.x0 < -TOLERANCE_PX or box.y0 < -TOLERANCE_PX or box.x1 > renderer.width + TOLERANCE_PX
                or box.y1 > renderer.height + TOLERANCE_PX):
            name = getattr(self.figure, "_pvsst_name", "?")
            problem = f"{name}: {self.get_text()!r} at {tuple(round(v) for v in box.bounds)} on {renderer.width}x{renderer.height}"
        drawn.append((id(self.figure), id(renderer), problem))

    monkeypatch.setattr(matplotlib.text.Text, "draw", recording_draw)
    try:
        save()
    finally:
        monkeypatch.undo()
    last = {figure: renderer for figure, renderer, _ in drawn}
    return [problem for figure, renderer, problem in drawn if problem and last[figure] == renderer]


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
