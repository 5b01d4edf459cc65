"""`pvsst analyze RUN` on synthetic run stores built with the documented schema, and CLI bad input."""
from __future__ import annotations

import pandas as pd
import pytest
from analysis_synthetic_run import write_run
from cli_checks import error_line
from reference_paths import PUBLISHED_ANALYSIS
from statsmodels.stats.multitest import multipletests

from pvsst.analysis.stats.paired import SETTING_COLUMNS
from pvsst.analysis.study.run_analysis import ANALYSIS_FILES, analyze_run
from pvsst.experiments.cli import main

PLANTED = {"likes": 0.8, "single_source": 0.8, "distributed_sources": 0.8}


def test_analyze_writes_every_table_and_prints_the_headline(tmp_path, capsys):
    run = write_run(tmp_path / "run", imitation=PLANTED, with_edges=True)
    assert main(["analyze", str(run), "--homophily-replicates", "20"]) == 0
    out = capsys.readouterr().out
    assert "Preregistered headline: final_honest_pairwise_similarity" in out
    assert sorted(p.name for p in (run / "analysis").iterdir()) == sorted([*ANALYSIS_FILES, ".pvsst-files"])
    outcomes = pd.read_csv(run / "analysis" / "trial_outcomes.csv")
    assert len(outcomes) == 32 and outcomes["exposure_audit_pass"].all()
    adversarial = outcomes["condition"].isin(["single_source", "distributed_sources"])
    assert (outcomes.loc[adversarial, "attacker_impressions"] == 6 * (3 - 1)).all()
    per_round = pd.read_csv(run / "analysis" / "per_round.csv")
    assert len(per_round) == 32 * 3 and set(per_round["round"]) == {0, 1, 2}
    contrasts = pd.read_csv(run / "analysis" / "contrasts.csv")
    published = pd.read_csv(PUBLISHED_ANALYSIS, nrows=1)
    assert list(contrasts.columns) == list(published.columns) + list(SETTING_COLUMNS)
    assert len(contrasts) == 4 * 6 * (1 + 2 + 2)  # contrasts x metrics x (overall, 2 models, 2 topics)
    engagement = contrasts[(contrasts["contrast"] == "engagement_likes_minus_control")
                           & (contrasts["metric"] == "final_honest_pairwise_similarity")
                           & (contrasts["stratum"] == "all")].iloc[0]
    # planted imitation in the likes arm: every one of the 8 blocks is more similar than its control
    assert (engagement["n_blocks"], engagement["positive"], engagement["negative"]) == (8, 8, 0)
    assert engagement["randomization_p"] == 2 / 2 ** 8
    headline = pd.read_csv(run / "analysis" / "headline.csv")
    assert headline["contrast"].tolist()[1] == "engagement_likes_minus_control"
    assert bool(headline["consistency_pass"].iloc[1])
    homophily = pd.read_csv(run / "analysis" / "homophily.csv")
    assert set(homophily["graph"]) == {"follow", "likes"}
    assert set(homophily["null"]) == {"label_shuffle", "rewiring"}
    # edges link same-side agents: the follow graph is assortative on initial side in most trials
    follow_side = homophily[(homophily["graph"] == "follow")
                            & (homophily["measure"] == "attribute_assortativity:initial_side")]
    assert (follow_side["observed"] > 0).mean() > 0.5


def test_spec_plan_is_followed_and_rerun_replaces_the_folder(tmp_path):
    spec = {"analysis": {"contrasts": {"adversary": {"treatment": "single_source", "control": "control"}},
                         "bootstrap_draws": 500},
            "outcomes": {"primary": ["delta_alignment"]}}
    run = write_run(tmp_path / "run", spec=spec, models=("m1",), topics=("t1",))  # two blocks show the plan
    first = analyze_run(run, homophily_replicates=5)
    assert first.contrasts.frame["contrast"].unique().tolist() == ["adversary"]
    assert first.contrasts.frame["metric"].unique().tolist() == ["delta_alignment"]
    assert first.headline["metric"].tolist() == ["delta_alignment"]
    second = analyze_run(run, homophily_replicates=5)
    pd.testing.assert_frame_equal(first.contrasts.frame, second.contrasts.frame)
    assert not [p for p in run.iterdir() if p.name.startswith(".analysis")]


def test_incomplete_blocks_are_excluded_and_listed(tmp_path, capsys):
    run = write_run(tmp_path / "run", skip=("m1-t1-101-control",), topics=("t1",))  # 4 blocks, 1 incomplete
    assert main(["analyze", str(run), "--homophily-replicates", "5"]) == 0
    assert "excluded" in capsys.readouterr().out
    excluded = pd.read_csv(run / "analysis" / "excluded_blocks.csv")
    assert set(excluded["contrast"]) == {"engagement_likes_minus_control"}
    assert set(excluded["reason"]) == {"missing arm control"}
    assert excluded[["model", "topic_id", "seed"]].drop_duplicates().values.tolist() == [["m1", "t1", 101]]


def test_analyze_bad_input_exits_2_with_one_line(tmp_path, capsys, monkeypatch):
    assert main(["analyze", str(tmp_path / "missing")]) == 2
    assert "does not exist" in error_line(capsys)
    # A bad frozen plan is reported before any trial is scored (at 448 trials, minutes sooner).
    import pvsst.analysis.study.run_analysis as run_analysis

    def not_before_the_plan(*args, **kwargs):
        raise AssertionError("outcomes computed before the plan was checked")

    monkeypatch.setattr(run_analysis, "collect_trial_outcomes", not_before_the_plan)
    # the plan is refused before any trial is read, so one block is store enough
    one_block = {"models": ("m1",), "topics": ("t1",), "seeds": (101,)}
    run = write_run(tmp_path / "unknown_arm",
                    spec={"analysis": {"contrasts": {"u": {"treatment": "unranked", "control": "likes"}}}},
                    **one_block)
    assert main(["analyze", str(run)]) == 2
    assert "unknown arm 'unranked'" in error_line(capsys)
    # the frozen plan is read strictly: an alternate or misspelt key is an error, not a default
    for i, (section, expected) in enumerate((({"seed": 5}, "spec.analysis.seed: unknown key"),
                              ({"randomization": {"drawz": 9}}, "spec.analysis.randomization.drawz: unknown key"),
                              ({"bootstrap_draws": "500"}, "spec.analysis.bootstrap_draws: Input should be"))):
        contrasts = {"e": {"treatment": "likes", "control": "control"}}
        run = write_run(tmp_path / f"strict{i}", spec={"analysis": {"contrasts": contrasts, **section}}, **one_block)
        assert main(["analyze", str(run)]) == 2
        err = error_line(capsys)
        assert f"{run / 'manifest.json'}: {expected}" in err, err
    monkeypatch.undo()
    run = write_run(tmp_path / "no_blocks", conditions=("likes", "control"), models=("m1",), topics=("t1",),
                    skip=("m1-t1-101-likes", "m1-t1-211-control"))
    assert main(["analyze", str(run)]) == 2
    assert "no complete blocks" in error_line(capsys)


def test_stats_paired_bad_input_exits_2_with_one_line(tmp_path, capsys):
    table = tmp_path / "t.csv"
    pd.DataFrame({"model": ["m", "m"], "topic_id": ["t", "t"], "seed": [1, 1],
                  "condition": ["likes", "control"], "y": [1.0, 0.5]}).to_csv(table, index=False)
    base = ["stats", "paired", str(table), "--out", str(tmp_path / "o.csv"), "--strata", "model"]
    assert main(base + ["--metric", "z", "--contrast", "e=likes-control"]) == 2
    assert error_line(capsys).endswith("z: missing column")
    assert main(base + ["--metric", "y", "--contrast", "e=likes-unranked"]) == 2
    assert "unknown arm 'unranked'" in error_line(capsys)
    assert main(base + ["--metric", "y", "--contrast", "likes-control"]) == 2
    assert "malformed contrast" in error_line(capsys)
    assert main(["stats", "paired", str(tmp_path / "none.csv"), "--out", str(tmp_path / "o.csv")]) == 2
    assert "does not exist" in error_line(capsys)
    assert main(base + ["--metric", "y", "--contrast", "e=likes-control"]) == 0
    written = pd.read_csv(tmp_path / "o.csv")
    assert written[["stratum_type", "n_blocks", "mean_difference"]].values.tolist() == [
        ["overall", 1, 0.5], ["model", 1, 0.5]]


def test_every_row_records_the_frozen_settings(tmp_path):
    # The frozen plan, not a default: monte_carlo with 999 draws is what runs, and each row says so.
    plan = {"contrasts": {"eng": {"treatment": "likes", "control": "control"}},
            "randomization": {"method": "monte_carlo", "draws": 999}, "bootstrap_draws": 300,
            "bootstrap_seed": 7, "alpha": 0.1, "multiplicity": "holm",
            "consistency": {"min_model_share": 1.0, "min_topic_share": 0.5}, "parse_failure_threshold": 0.2}
    # the plan's one contrast needs only its two arms; all 8 blocks are kept
    run = write_run(tmp_path / "run", spec={"analysis": plan}, imitation={"likes": 0.8},
                    conditions=("control", "likes"))
    analyze_run(run, homophily_replicates=3)
    contrasts = pd.read_csv(run / "analysis" / "contrasts.csv")
    assert set(contrasts["randomization_method"]) == {"monte_carlo"}
    assert set(contrasts["randomization_draws"]) == {999}
    assert ((contrasts["randomization_p"] * 1000).round(9) % 1 == 0).all()  # (k + 1) / (999 + 1)
    assert set(contrasts["bootstrap_draws"]) == {300} and set(contrasts["bootstrap_seed"]) == {7}
    assert set(contrasts["alpha"]) == {0.1}
    headline = pd.read_csv(run / "analysis" / "headline.csv").iloc[0]
    assert (headline["multiplicity"], headline["min_model_share"], headline["min_topic_share"]) == ("holm", 1.0, 0.5)
    overall = contrasts[contrasts["stratum_type"] == "overall"]
    holm = dict(zip(overall["metric"], multipletests(overall["randomization_p"], method="holm")[1]))
    assert headline["adjusted_p"] == pytest.approx(holm[headline["metric"]], abs=1e-15)
    assert set(pd.read_csv(run / "analysis" / "parse_failures.csv")["threshold"]) == {0.2}
