"""Every figure of the four kinds of report reads well: a study run, a survey run, a cell run (CCES 2016
on state cells) and a counterfactual audit.

Per figure: every legend entry differs from every other in colour and in marker; colour bars carry
several ticks of at most 3 significant digits; numeric axes are labelled; the report shows the caption
under the figure; every text lies inside the canvas the report saved (the texts are recorded while the
reports save their figures, so each figure is drawn once, as ``pvsst report`` draws it). On the cell
run's state scatter the model, the cell oracle, the national marginal and uniform each have their own
entry. The four reports are built once, in one test (a module fixture would be built again on each
xdist worker).
"""
from __future__ import annotations

import pandas as pd
import pytest
from analysis_synthetic_run import write_run
from audit_helpers import audit_spec, run_and_score
from cell_run_fixture import census_population, write_cell_run
from report_checks import axis_label_problems, colorbar_problems, legend_entries, legend_problems, texts_outside_canvas
from survey_helpers import scripted_survey_run

from pvsst.analysis.figures import distribution_by_group_figure
from pvsst.analysis.report import build_run_report, build_survey_report
from pvsst.analysis.survey.cells.state_scores import CELL_ORACLE, NATIONAL_MARGINAL, UNIFORM
from pvsst.experiments.cli import main

pytestmark = pytest.mark.slow

EXPECTED = {
    "study": {"similarity_by_round", "stance_trajectories", "opposite_side_survival", "belief_consistency",
              "network_trial", "forest_*", "homophily_*"},
    "survey": {"survey_answer_shares", "survey_heatmap_js_distance", "fidelity_js_distance", "survey_subgroup_gaps",
               "survey_group_shares"},
    "cells": {"state_map_votetrump", "state_error_map_votetrump", "state_scatter_votetrump", "group_errors"},
    "audit": {"survey_audit_disparity"},
}


def build_reports(root) -> dict:
    """kind -> the report, each built as ``pvsst report`` builds it."""
    study = write_run(root / "study", imitation={"likes": 0.8}, with_edges=True)
    cells = write_cell_run(root / "cells", ["state", "sex"], population=census_population(2000))
    assert main(["survey", "score", str(cells), "--draws", "10"]) == 0  # the figures, not their intervals
    (root / "audit").mkdir()
    audit = run_and_score(root / "audit", audit_spec(sets=20, questions=2), "audit")
    options = {"figure_formats": ["png"], "formats": ["md"]}
    return {"study": build_run_report(study, homophily_replicates=10, **options),
            "survey": build_survey_report(scripted_survey_run(root), **options),
            "cells": build_survey_report(cells, **options), "audit": build_survey_report(audit, **options)}


def test_every_figure_of_the_four_reports_reads_well(tmp_path, monkeypatch):
    distributions = pd.DataFrame({"question": "natenvir", "group": ["party=Democrat"] * 6 + ["party=Republican"] * 6,
                                  "option": ["too_little", "about_right", "too_much"] * 4,
                                  "source": (["human"] * 3 + ["scripted/imitate | direct"] * 3) * 2,
                                  "share": [0.8, 0.15, 0.05, 0.3, 0.3, 0.4, 0.5, 0.3, 0.2, 0.6, 0.2, 0.2]})
    reports, figures = {}, []

    def build_and_save():
        reports.update(build_reports(tmp_path))
        for kind, report in reports.items():
            for _, figure in report.figures:
                figure.figure._pvsst_name = f"{kind}/{figure.name}"
        figures.append(distribution_by_group_figure(distributions, "natenvir"))
        figures[-1].figure._pvsst_name = figures[-1].name
        figures[-1].save(tmp_path / "figures", ["png"])

    try:
        assert texts_outside_canvas(monkeypatch, build_and_save) == []
    finally:
        for figure in figures:
            figure.close()
    problems = []
    for kind, report in reports.items():
        markdown = (report.out_dir / "report.md").read_text()
        drawn = [figure for _, figure in report.figures]
        assert all((report.out_dir / "figures" / f"{figure.name}.png").exists() for figure in drawn), kind
        names = {f.name for f in drawn}
        missing = [n for n in EXPECTED[kind]
                   if not any(m == n or n.endswith("*") and m.startswith(n[:-1]) for m in names)]
        assert not missing, f"{kind} report lacks {missing}: {sorted(names)}"
        for figure in drawn:
            name = f"{kind}/{figure.name}"
            problems += legend_problems(name, figure.figure) + colorbar_problems(name, figure.figure)
            problems += axis_label_problems(name, figure.figure)
            if not figure.caption.strip() or f".* {figure.caption}" not in markdown:
                problems.append(f"{name}: its caption is not under it in report.md")
    assert problems == [], "\n".join(problems)

    scatter = next(f for _, f in reports["cells"].figures if f.name == "state_scatter_votetrump")
    labels = [label for label, _, _ in legend_entries(scatter.figure)]
    expected = {CELL_ORACLE, NATIONAL_MARGINAL, UNIFORM}
    assert expected <= set(labels) <= {*expected, "identity (simulated = real)", *scatter.data["source"]}, labels
    assert any(label.startswith("scripted/planted") for label in labels), labels
