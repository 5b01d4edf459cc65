"""`pvsst report`: the report of a run and of PV-SST's published table (content, HTML images, CLI)."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analysis_synthetic_run import write_run
from reference_paths import REFERENCE
from report_checks import assert_self_contained, html_images

from pvsst.analysis.report import build_run_report, build_table_report
from pvsst.analysis.stats.paired import SETTING_COLUMNS
from pvsst.experiments.cli import main

SPEC = {
    "title": "Synthetic report study",
    "hypotheses": [
        {"id": "H1_similarity", "statement": "A likes-ranked feed raises lexical similarity.",
         "contrast": "engagement_likes_minus_control", "metric": "final_honest_pairwise_similarity",
         "direction": "positive", "primary": True},
        {"id": "H2_pdi", "statement": "Distributed sources move agents more than one source.",
         "contrast": "pdi_distributed_minus_single", "metric": "delta_alignment", "direction": "positive",
         "primary": False}],
    "outcomes": {"primary": ["final_honest_pairwise_similarity"], "secondary": ["delta_alignment"]},
    "analysis": {"contrasts": {"engagement_likes_minus_control": {"treatment": "likes", "control": "control"},
                               "pdi_distributed_minus_single": {"treatment": "distributed_sources",
                                                                "control": "single_source"}},
                 "bootstrap_draws": 500, "parse_failure_threshold": 0.01, "multiplicity": "fdr_bh"},
}


def with_manifest(run: Path, **fields) -> Path:
    manifest = json.loads((run / "manifest.json").read_text())
    manifest.update(fields)
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


def test_table_report_reproduces_the_published_pvsst_headline(tmp_path, capsys):
    out = tmp_path / "pvsst_core"
    assert main(["report", "--from-table", str(REFERENCE / "pvsst_v1_core_results.csv"), "--out", str(out)]) == 0
    assert f"wrote {out / 'report.html'}" in capsys.readouterr().out
    # every statistic equals the study's own table (pvsst_v1_core_confirmatory_analysis.csv)
    ours = pd.read_csv(out / "contrasts.csv")
    published = pd.read_csv(REFERENCE / "pvsst_v1_core_confirmatory_analysis.csv")
    assert list(ours.columns) == list(published.columns) + list(SETTING_COLUMNS)
    assert len(ours) == len(published) == 216
    numeric = published.select_dtypes("number").columns
    assert np.allclose(ours[numeric].to_numpy(float), published[numeric].to_numpy(float), rtol=1e-9, atol=1e-12)
    headline = pd.read_csv(out / "headline.csv").set_index("contrast")
    engagement = headline.loc["engagement_likes_minus_control"]
    assert (round(engagement["mean_difference"], 4), round(engagement["ci95_low"], 4),
            round(engagement["ci95_high"], 4)) == (0.0082, 0.0043, 0.0121)
    markdown = (out / "report.md").read_text()
    row = next(line for line in markdown.splitlines()
               if line.startswith("| engagement_likes_minus_control | final_honest_pairwise_similarity"))
    assert "+0.0082" in row and "[0.0043, 0.0121]" in row and "yes (3/4 models, 4/4 topics)" in row
    figures = sorted(p.name for p in (out / "figures").iterdir())
    assert "forest_engagement_likes_minus_control__final_honest_pairwise_similarity.png" in figures
    assert "forest_engagement_likes_minus_control__final_honest_pairwise_similarity.pdf" in figures
    html = (out / "report.html").read_text()
    assert_self_contained(html, n_figures=len(figures) // 2)
    # the page embeds the very PNG files written beside it, in the order of the figures section
    embedded = [base64.b64decode(src.split(",", 1)[1]) for src in html_images(html)]
    pngs = {p.read_bytes() for p in (out / "figures").glob("*.png")}
    assert set(embedded) == pngs and len(embedded) == len(pngs)


def test_table_report_figure_shows_the_headline_numbers(tmp_path):
    result = build_table_report(REFERENCE / "pvsst_v1_core_results.csv", tmp_path / "r", figure_formats=["png"],
                                formats=["md"])
    forest = next(f for f in result.figures
                  if f[1].name == "forest_engagement_likes_minus_control__final_honest_pairwise_similarity")[1]
    ax = forest.axes[0]
    overall = ax.containers[0]
    line, _, (bars,) = overall.lines
    assert line.get_xdata()[0] == pytest.approx(0.0082, abs=5e-5)
    (low, _), (high, _) = bars.get_segments()[0]
    assert (round(low, 4), round(high, 4)) == (0.0043, 0.0121)
    assert [t.get_text() for t in ax.texts] == ["+0.0082 [0.0043, 0.0121]"]
    assert not (tmp_path / "r" / "report.html").exists()  # only the formats asked for


def test_run_report_sets_the_plan_beside_results_with_deviation_and_audits(tmp_path, capsys):
    run = write_run(tmp_path / "run", spec=SPEC, imitation={"likes": 0.8}, with_edges=True)
    with_manifest(run, spec_id="synthetic", spec_sha256="b" * 64, frozen_sha256="a" * 64,
                  frozen_at="2026-01-01T00:00:00+00:00",
                  deviations=[{"text": "raised the bootstrap draws", "frozen_sha256": "a" * 64,
                               "current_sha256": "b" * 64, "changed_fields": ["analysis.bootstrap_draws: 200 -> 500"],
                               "at": "2026-01-02T00:00:00+00:00"}],
                  runs=[{"started_at": "2026-01-02T00:00:00+00:00", "finished_at": "2026-01-02T00:01:30+00:00",
                         "executor": "local", "workers": 1, "versions": {"pvsst": "0.1.0", "numpy": "2.x"}}])
    assert not (run / "analysis").exists()
    assert main(["report", str(run), "--homophily-replicates", "10"]) == 0
    out = capsys.readouterr().out
    assert "H1_similarity (primary)" in out and "-> SUPPORTED" in out
    assert (run / "analysis" / "contrasts.csv").exists()  # computed first
    markdown = (run / "report" / "report.md").read_text()
    for text in ("## 1. What was preregistered", "A likes-ranked feed raises lexical similarity.",
                 "engagement_likes_minus_control = likes - control", "H2_pdi", "## 2. Results against the plan",
                 "**SUPPORTED**", "**NOT SUPPORTED**", "## 3. Deviations from the preregistration",
                 "raised the bootstrap draws", "`analysis.bootstrap_draws: 200 -> 500`",
                 "1 recorded (section 3): raised the bootstrap draws", "## 4. Checks",
                 "8 of 8 planned blocks complete", "every trial passed the exposure check",
                 "192 adversarial impressions delivered, 192 expected",
                 "exceeds the preregistered threshold 1.0%", "wall time 90.0 s", "## 5. Environment"):
        assert text in markdown, text
    verdicts = {line.split("|")[1].strip(): line for line in markdown.splitlines() if line.startswith("| H")}
    assert "**SUPPORTED**" in verdicts["H1_similarity (primary)"]
    assert "| 8 " in verdicts["H1_similarity (primary)"] and "2/2 models, 2/2 topics" in verdicts["H1_similarity "
                                                                                                  "(primary)"]
    figures = sorted((run / "report" / "figures").glob("*.png"))
    names = {p.stem for p in figures}
    assert {"similarity_by_round", "stance_trajectories", "opposite_side_survival", "network_trial",
            "forest_engagement_likes_minus_control__final_honest_pairwise_similarity",
            "forest_pdi_distributed_minus_single__delta_alignment", "homophily_initial_side_label_shuffle"} <= names
    assert len(list((run / "report" / "figures").glob("*.pdf"))) == len(figures)
    for name in names:
        assert f"](figures/{name}.png)" in markdown
    assert_self_contained((run / "report" / "report.html").read_text(), n_figures=len(figures))
    # the headline estimate in the report is the analysis table's number
    contrasts = pd.read_csv(run / "analysis" / "contrasts.csv")
    h1 = contrasts[(contrasts["contrast"] == "engagement_likes_minus_control")
                   & (contrasts["metric"] == "final_honest_pairwise_similarity")
                   & (contrasts["stratum"] == "all")].iloc[0]
    assert f"{h1['mean_difference']:+.4f}" in verdicts["H1_similarity (primary)"]


def test_two_block_two_arm_run_reports_not_powered(tmp_path, capsys):
    spec = {"hypotheses": [{"id": "H1", "statement": "Likes change similarity.", "contrast": "likes_minus_control",
                            "metric": "final_honest_pairwise_similarity", "direction": "two_sided", "primary": True}],
            "analysis": {"contrasts": {"likes_minus_control": {"treatment": "likes", "control": "control"}}}}
    run = write_run(tmp_path / "quickstart", spec=spec, imitation={"likes": 0.5}, models=("m1",), topics=("t1",),
                    seeds=(101, 211), conditions=("control", "likes"))
    assert main(["analyze", str(run), "--homophily-replicates", "5"]) == 0
    fidelity = pd.DataFrame([{"question": q, "group": "all", "metric": "js_distance", "provider": p,
                              "value": v, "ci_low": v - 0.05, "ci_high": v + 0.05}
                             for q, p, v in [("q1", "scripted/imitate", 0.3), ("q1", "scripted/uniform", 0.5),
                                             ("q2", "scripted/imitate", 0.2), ("q2", "scripted/uniform", 0.4)]])
    fidelity.to_csv(run / "analysis" / "fidelity.csv", index=False)
    capsys.readouterr()
    assert main(["report", str(run), "--figures", "png"]) == 0
    out = capsys.readouterr().out
    assert (run / "report" / "figures" / "fidelity_js_distance.png").exists()
    assert "not powered" in out and "-> NOT POWERED" in out
    markdown = (run / "report" / "report.md").read_text()
    assert "**NOT POWERED**" in markdown and "smallest attainable p is 0.5" in markdown
    assert "2 of 2 planned blocks complete" in markdown
    assert not list((run / "report" / "figures").glob("*.pdf"))
    assert_self_contained((run / "report" / "report.html").read_text(),
                          n_figures=len(list((run / "report" / "figures").glob("*.png"))))


def test_report_on_a_real_scripted_run_from_the_runner(tmp_path):
    spec_text = Path("experiments/specs/quickstart.yaml").read_text().replace("embedded/smollm2-135m",
                                                                              "scripted/imitate")
    spec = tmp_path / "qs.yaml"
    spec.write_text(spec_text)
    assert main(["prereg", "freeze", str(spec)]) == 0
    spec.write_text(spec_text.replace("A four-trial demonstration", "An edited demonstration"))
    run = tmp_path / "run"
    assert main(["run", str(spec), "--out", str(run), "--deviation", "edited the description"]) == 0
    result = build_run_report(run, figure_formats=["png"])
    markdown = result.markdown_path.read_text()
    assert f"Read from the lock `{spec}.lock.json`" in markdown
    assert "edited the description" in markdown and "changed: `description:" in markdown
    assert [v.verdict for v in result.verdicts] == ["NOT POWERED"]
    assert "144 model calls" in markdown  # 4 trials x 36 calls (quickstart.yaml)
    first = sorted(p.name for p in result.out_dir.rglob("*"))
    build_run_report(run, figure_formats=["png"])  # a rerun replaces the folder, leaving no temporary one
    assert sorted(p.name for p in result.out_dir.rglob("*")) == first
    assert not [p for p in run.iterdir() if p.name.startswith(".report")]


def test_bad_input_is_one_line_and_exit_2(tmp_path, capfd):
    assert main(["report"]) == 2
    assert main(["report", str(tmp_path / "missing")]) == 2
    assert main(["report", str(tmp_path), "--format", "docx"]) == 2
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "x")]) == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    assert main(["report", "--from-table", str(bad), "--out", str(tmp_path / "o")]) == 2
    errors = capfd.readouterr().err.strip().splitlines()
    assert len(errors) == 5 and all(line.startswith("pvsst: error: ") for line in errors)
    assert "unknown format" in errors[2] and "missing column" in errors[4]
    assert not (tmp_path / "o").exists()
