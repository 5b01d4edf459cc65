"""Figures never clip: every text drawn into a saved figure lies inside the saved canvas.

Every figure kind of the experiment report (a synthetic run with follow edges, so the network and
homophily figures are drawn, plus the survey-fidelity figures it embeds) and of the survey report (a
scripted survey run) is saved through :class:`pvsst.analysis.figures.style.PaperFigure`, the code the
reports save with, while ``Text.draw`` records where each text landed on the renderer's canvas.
"""
from __future__ import annotations

import io

import pandas as pd
import pytest

from pvsst.analysis.figures import contrast_forest_figure, distribution_by_group_figure, fidelity_by_question_figure
from pvsst.analysis.report import build_run_report, build_survey_report
from analysis_synthetic_run import write_run
from report_checks import texts_outside_canvas
from survey_helpers import scripted_survey_run


def save_all(figures, directory) -> None:
    """Save each figure as the reports do (``PaperFigure.save``; the HTML embeds the PNG it wrote)."""
    for figure in figures:
        figure.figure._pvsst_name = figure.name
        figure.save(directory, ["png"])


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


@pytest.mark.slow
def test_every_figure_of_both_reports_keeps_its_text_inside_the_canvas(tmp_path, monkeypatch):
    run = write_run(tmp_path / "experiment", imitation={"likes": 0.8}, with_edges=True)
    experiment = build_run_report(run, figure_formats=["png"], formats=["md"], homophily_replicates=10)
    survey_run = scripted_survey_run(tmp_path)
    survey = build_survey_report(survey_run, figure_formats=["png"], formats=["md"])
    fidelity = pd.read_csv(survey_run / "analysis" / "fidelity.csv")
    distributions = pd.DataFrame({"question": "natenvir", "group": ["party=Democrat"] * 6 + ["party=Republican"] * 6,
                                  "option": ["too_little", "about_right", "too_much"] * 4,
                                  "source": (["human"] * 3 + ["scripted/imitate | direct"] * 3) * 2,
                                  "share": [0.8, 0.15, 0.05, 0.3, 0.3, 0.4, 0.5, 0.3, 0.2, 0.6, 0.2, 0.2]})
    figures = ([f for _, f in experiment.figures] + [f for _, f in survey.figures]
               + [quickstart_forest(), fidelity_by_question_figure(fidelity),
                  distribution_by_group_figure(distributions, "natenvir")])
    names = {f.name for f in figures}
    assert {"similarity_by_round", "stance_trajectories", "opposite_side_survival", "network_trial",
            "survey_answer_shares", "survey_heatmap_js_distance", "survey_subgroup_gaps",
            "fidelity_js_distance", "fidelity_distribution_natenvir"} <= names, names
    assert any(n.startswith("forest_") for n in names) and any(n.startswith("homophily_") for n in names)
    assert texts_outside_canvas(monkeypatch, lambda: save_all(figures, tmp_path / "figures")) == []
