"""Figures never clip: the check that records where each text lands on the saved canvas sees the clip the
old saving code made, and the shared saving code (:class:`pvsst.analysis.figures.style.PaperFigure`)
keeps every text on it. Every figure of the four kinds of report is checked in ``test_report_figures.py``.
"""
from __future__ import annotations

import io

import pandas as pd
from report_checks import texts_outside_canvas

from pvsst.analysis.figures import contrast_forest_figure


def quickstart_forest():
    """The quickstart's forest plot shape: a long model name and topics as strata (the reported clip)."""
    table = pd.DataFrame({"contrast": "engagement_likes_minus_control", "metric": "final_honest_pairwise_similarity",
                          "stratum_type": ["overall", "model", "topic", "topic"],
                          "stratum": ["all", "embedded/smollm2-135m", "ai_content_labels", "remote_work"],
                          "n_blocks": [2, 2, 1, 1], "mean_difference": [0.01, 0.01, 0.02, 0.0],
                          "ci95_low": [0.0, 0.0, 0.01, -0.01], "ci95_high": [0.02, 0.02, 0.03, 0.01]})
    return contrast_forest_figure(table, "engagement_likes_minus_control", "final_honest_pairwise_similarity")


def test_the_check_sees_the_clip_the_old_saving_code_made(monkeypatch):
    figure = quickstart_forest()
    # saving at the fixed figure size (the old code's canvas) cuts the x-axis label at the right edge
    cut = texts_outside_canvas(monkeypatch, lambda: figure.figure.savefig(io.BytesIO(), format="png", dpi=100))
    assert any("paired difference (TF-IDF cosine)" in text for text in cut), cut
    # the shared saving code keeps it (and every other text) on the canvas
    assert texts_outside_canvas(monkeypatch, figure.png_bytes) == []
    figure.close()
