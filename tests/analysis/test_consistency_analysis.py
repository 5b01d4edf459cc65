"""Belief-behaviour consistency in ``pvsst analyze`` and ``pvsst report``: per-trial columns recomputed
from the run's tables and the judgments, per-arm summaries with block-bootstrap intervals, contrasts on
consistency metrics, the spec's choice of judge, and the report section with its figure.

Runs: ``scripted/planted_contradiction`` (and ``scripted/planted_same_side_votes``), one topic, seeds
101 and 211, arms control and likes, 6 agents x 3 rounds (4 trials, 2 blocks per arm).
"""
from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from judge_helpers import planted_run, planted_study, register_test_judges

from pvsst.analysis.store.reader import load_run
from pvsst.analysis.study.outcomes import CONSISTENCY_COLUMNS, belief_consistency_outcomes
from pvsst.experiments.cli import main

METRICS = ("like_rate_chance", "stance_contradiction_rate")


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    register_test_judges()
    return planted_run(tmp_path_factory.mktemp("consistency"), contrast_metrics=METRICS)


@pytest.fixture
def run(planted, tmp_path):
    shutil.copytree(planted, tmp_path / "run")
    return tmp_path / "run"


def test_consistency_columns_summaries_and_contrasts(run, capsys):
    # a contrast on a judged metric needs judgments first
    assert main(["analyze", str(run), "--homophily-replicates", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "analysis.contrasts.likes_minus_control.metrics[1]" in err
    assert "pvsst judge" in err and not (run / "analysis").exists()
    assert main(["judge", str(run), "--judge", "lexicon"]) == 0
    assert main(["analyze", str(run), "--homophily-replicates", "2"]) == 0
    outcomes = pd.read_csv(run / "analysis" / "trial_outcomes.csv").set_index("trial_id")
    data = load_run(run)
    judged = pd.read_parquet(run / "analysis" / "judgments" / "lexicon.parquet")
    for trial_id, row in outcomes.iterrows():
        tables = data.trial(trial_id)
        expected = belief_consistency_outcomes(tables["agents"], tables["posts"], tables["votes"],
                                               judged[judged["trial_id"] == trial_id])
        assert row[list(CONSISTENCY_COLUMNS)].astype(float).to_numpy() == pytest.approx(
            np.array([expected[c] for c in CONSISTENCY_COLUMNS], float), nan_ok=True)
        assert row["stance_judge"] == "lexicon" and row["n_judged_posts"] == 18
    # the lexicon judge reads the planted writer exactly, so a judged contradiction is a planted one
    assert 0 < outcomes["stance_contradiction_rate"].mean() < 0.5
    rows = pd.read_csv(run / "analysis" / "stance_consistency.csv")
    assert len(rows) == 72 and set(rows["trial_id"]) == set(outcomes.index)
    per_trial = rows.groupby("trial_id")["contradiction"].mean()
    assert per_trial.to_numpy() == pytest.approx(outcomes.loc[per_trial.index, "stance_contradiction_rate"].to_numpy())
    summary = pd.read_csv(run / "analysis" / "belief_consistency.csv")
    assert len(summary) == 2 * 8  # arms x metrics, one model
    likes = summary[(summary["condition"] == "likes") & (summary["metric"] == "stance_contradiction_rate")].iloc[0]
    values = outcomes.loc[outcomes["condition"] == "likes", "stance_contradiction_rate"]
    assert likes["n_blocks"] == 2 and likes["mean"] == pytest.approx(values.mean())
    assert likes["ci_low"] <= likes["mean"] <= likes["ci_high"] and likes["bootstrap_draws"] == 1000
    assert likes["judge"] == "lexicon"
    contrasts = pd.read_csv(run / "analysis" / "contrasts.csv")
    overall = contrasts[contrasts["stratum_type"] == "overall"].set_index("metric")
    assert set(METRICS) <= set(overall.index)
    by_seed = outcomes.pivot_table(index="seed", columns="condition", values="like_rate_chance")
    assert overall.loc["like_rate_chance", "mean_difference"] == pytest.approx(
        (by_seed["likes"] - by_seed["control"]).mean())
    assert main(["report", str(run)]) == 0
    report = (run / "report" / "report.md").read_text()
    assert "### Belief-behaviour consistency" in report and "stance judge **lexicon**" in report
    assert (run / "report" / "figures" / "belief_consistency.png").is_file()


def test_the_spec_names_the_judge_and_one_that_did_not_judge_is_an_error(tmp_path, capsys):
    spec = planted_study(tmp_path / "s", analysis_extra="  stance_judge: lexicon\n", frozen=False)
    text = spec.read_text()
    assert "  stance_judge: lexicon\nexecution" in text  # under analysis
    spec.write_text(text.replace("  stance_judge: lexicon\n", "  stance_judge: scripted/lexicon_judge\n"))
    assert main(["prereg", "freeze", str(spec)]) == 0
    assert main(["run", str(spec), "--out", str(tmp_path / "run")]) == 0
    run = tmp_path / "run"
    assert main(["judge", str(run), "--judge", "lexicon"]) == 0
    capsys.readouterr()
    assert main(["analyze", str(run), "--homophily-replicates", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "spec.analysis.stance_judge" in err and "has not judged" in err
    assert main(["judge", str(run)]) == 0  # the spec's judge is the default of `pvsst judge`
    assert main(["analyze", str(run), "--homophily-replicates", "2"]) == 0
    outcomes = pd.read_csv(run / "analysis" / "trial_outcomes.csv")
    assert set(outcomes["stance_judge"]) == {"scripted/lexicon_judge"}


def test_the_vote_measure_needs_no_judge(tmp_path):
    run = planted_run(tmp_path, model="scripted/planted_same_side_votes", seeds=(101, 211))
    assert main(["analyze", str(run), "--homophily-replicates", "2"]) == 0
    outcomes = pd.read_csv(run / "analysis" / "trial_outcomes.csv")
    assert outcomes["stance_contradiction_rate"].isna().all() and outcomes["stance_judge"].isna().all()
    assert (outcomes["n_sided_votes"] > 0).all() and outcomes["like_rate_chance"].notna().all()
    summary = pd.read_csv(run / "analysis" / "belief_consistency.csv")
    assert set(summary["metric"]) == {"like_rate_same_side", "like_rate_other_side", "like_rate_chance",
                                      "same_side_like_gap"}
    assert pd.read_csv(run / "analysis" / "judge_agreement.csv").empty
    assert pd.read_csv(run / "analysis" / "stance_consistency.csv").empty
