"""`pvsst report RUN` on a survey run: figures whose drawn values are the run's numbers, definitions,
preregistration and deviations, a self-contained HTML page, and bad input refused in one line."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from matplotlib.container import BarContainer

from analysis.report import build_survey_report
from analysis.survey.shares import answer_shares
from experiments.cli import main
from survey_helpers import scripted_survey_run
from test_report import assert_self_contained

MODEL = "scripted/imitate"


@pytest.fixture(scope="module")
def survey_run(tmp_path_factory):
    return scripted_survey_run(tmp_path_factory.mktemp("survey"), model=MODEL)


@pytest.mark.slow
def test_survey_report_from_the_cli(survey_run, capsys):
    assert not (survey_run / "analysis").exists()
    assert main(["report", str(survey_run)]) == 0
    out = capsys.readouterr().out
    assert "fidelity.csv` was missing, so this report scored the run first" in out
    report = survey_run / "report"
    markdown = (report / "report.md").read_text()
    for text in ("# Survey fidelity report: GSS 2018 national spending priorities", "## 1. Preregistration",
                 "Frozen at ", "command-line overrides", "## 2. Instrument and design", "## 3. Results", "## 4. Metric definitions",
                 "Jensen-Shannon distance, base 2", "p' = (p + s) / (1 + K s)", "H(p) / ln K", "kl_noise_floor",
                 "## 5. Audits", "## 6. Environment", "Closest model source on mean Jensen-Shannon distance"):
        assert text in markdown, text
    names = {p.stem for p in (report / "figures").glob("*.png")}
    assert names == {"survey_answer_shares", "survey_heatmap_js_distance", "survey_subgroup_gaps",
                     "fidelity_js_distance"}
    assert {p.stem for p in (report / "figures").glob("*.pdf")} == names
    for name in names:
        assert f"](figures/{name}.png)" in markdown
    assert_self_contained((report / "report.html").read_text(), n_figures=len(names))
    # the summary row of the model is the mean over questions of the fidelity table's numbers
    fidelity = pd.read_csv(survey_run / "analysis" / "fidelity.csv")
    js = fidelity[(fidelity["provider"] == MODEL) & (fidelity["condition"] == "direct")
                  & (fidelity["metric"] == "js_distance") & (fidelity["group"] == "all")]["value"]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in markdown.splitlines()
            if line.startswith("| scripted/")]
    row = next(r for r in rows if r[:3] == [MODEL, "direct", "sample"])
    assert row[4] == f"{js.mean():.4g}", (row, js.mean())


@pytest.mark.slow
def test_survey_figures_draw_the_run_numbers(survey_run, tmp_path):
    result = build_survey_report(survey_run, formats=["md"], figure_formats=["png"])
    figures = {f.name: f for _, f in result.figures}
    shares = answer_shares(survey_run)
    # human shares are the respondents' shares computed directly (the instrument is unweighted)
    human = pd.read_parquet(survey_run / "human.parquet")
    direct = human["natenvir"].value_counts(normalize=True)
    ours = shares[(shares["source"] == "human") & (shares["question"] == "natenvir")].set_index("option")["share"]
    assert ours.to_dict() == pytest.approx(direct.to_dict(), abs=1e-12)
    # the stacked bars' widths are those shares, for every source of every question
    bars = figures["survey_answer_shares"]
    widths = [p.get_width() for ax in bars.axes for c in ax.containers if isinstance(c, BarContainer) for p in c]
    assert sorted(widths) == pytest.approx(sorted(shares["share"].dropna()), abs=1e-12)
    assert sorted(bars.data["source"].unique()) == sorted(shares["source"].unique())
    # heatmap cells are the fidelity table's JS distances; the model rows carry floor / ceiling marks
    fidelity = pd.read_csv(survey_run / "analysis" / "fidelity.csv")
    heat = figures["survey_heatmap_js_distance"]
    image = heat.axes[0].images[0].get_array()
    js = fidelity[(fidelity["metric"] == "js_distance") & (fidelity["group"] == "all")]
    assert np.sort(np.asarray(image).ravel()) == pytest.approx(np.sort(js["value"].to_numpy()), abs=1e-12)
    marks = heat.data.set_index(["column", "question"])
    model_rows = marks[~marks.index.get_level_values(0).str.contains("scripted/(?:oracle|marginal|uniform)")]
    for (column, question), row in model_rows.iterrows():
        expected = "floor" if row["value"] <= row["floor"] else ("ceiling" if row["value"] >= row["ceiling"] else "")
        assert row["mark"] == expected
    oracle = js[(js["provider"] == "scripted/oracle") & (js["question"] == "natenvir")]["ci_high"].iloc[0]
    assert (model_rows.xs("natenvir", level="question")["floor"] == oracle).all()
    # subgroup gaps: the eta^2 points are the fidelity table's eta2_human / eta2_model rows
    gaps = figures["survey_subgroup_gaps"].data
    eta = fidelity[(fidelity["metric"] == "eta2_model") & (fidelity["provider"] == MODEL)]
    assert sorted(gaps.loc[gaps["source"] != "human", "eta2"].dropna()) == pytest.approx(
        sorted(eta["value"].dropna()), abs=1e-12)


@pytest.mark.slow
def test_preregistration_and_deviations_are_shown_when_the_manifest_has_them(survey_run):
    manifest_path = survey_run / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest.update(frozen_sha256="a" * 64, frozen_at="2026-01-01T00:00:00+00:00",
                    deviations=[{"text": "asked 16 respondents instead of 200", "frozen_sha256": "a" * 64,
                                 "current_sha256": manifest["survey_sha256"], "at": "2026-01-02T00:00:00+00:00",
                                 "changed_fields": ["personas.n: 200 -> 16"]}])
    manifest_path.write_text(json.dumps(manifest))
    markdown = build_survey_report(survey_run, formats=["md"], figure_formats=["png"]).markdown_path.read_text()
    assert "Frozen at 2026-01-01T00:00:00+00:00 with sha256 `" + "a" * 64 in markdown
    assert "asked 16 respondents instead of 200" in markdown and "`personas.n: 200 -> 16`" in markdown
    assert "Not preregistered" not in markdown


def test_report_of_a_folder_that_is_neither_run_exits_2(tmp_path, capfd):
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 2
    err = capfd.readouterr().err.strip()
    assert err.startswith("pvsst: error: ") and "\n" not in err
