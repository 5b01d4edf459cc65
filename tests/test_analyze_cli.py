"""`pvsst analyze RUN` on synthetic run stores built with the documented schema, and CLI bad input."""
from __future__ import annotations

import pandas as pd
import pytest

from analysis.run_analysis import ANALYSIS_FILES, analyze_run
from experiments.cli import main
from analysis_synthetic_run import write_run
from reference_paths import PUBLISHED_ANALYSIS

PLANTED = {"likes": 0.8, "single_source": 0.8, "distributed_sources": 0.8}


def test_analyze_writes_every_table_and_prints_the_headline(tmp_path, capsys):
    run = write_run(tmp_path / "run", imitation=PLANTED, with_edges=True)
    assert main(["analyze", str(run), "--homophily-replicates", "20"]) == 0
    out = capsys.readouterr().out
    assert "Preregistered headline: final_honest_pairwise_similarity" in out
    assert sorted(p.name for p in (run / "analysis").iterdir()) == sorted(ANALYSIS_FILES)
    outcomes = pd.read_csv(run / "analysis" / "trial_outcomes.csv")
    assert len(outcomes) == 32 and outcomes["exposure_audit_pass"].all()
    adversarial = outcomes["condition"].isin(["single_source", "distributed_sources"])
    assert (outcomes.loc[adversarial, "attacker_impressions"] == 6 * (3 - 1)).all()
    per_round = pd.read_csv(run / "analysis" / "per_round.csv")
    assert len(per_round) == 32 * 3 and set(per_round["round"]) == {0, 1, 2}
    contrasts = pd.read_csv(run / "analysis" / "contrasts.csv")
    published = pd.read_csv(PUBLISHED_ANALYSIS, nrows=1)
    assert list(contrasts.columns) == list(published.columns)
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
    follow_side = homophily[(homophily["graph"] == "follow") & (homophily["measure"] == "attribute_assortativity:initial_side")]
    assert (follow_side["observed"] > 0).mean() > 0.5


def test_spec_plan_is_followed_and_rerun_replaces_the_folder(tmp_path):
    spec = {"analysis": {"contrasts": ["adversary=single_source-control"], "metrics": ["delta_alignment"],
                         "primary_outcomes": ["delta_alignment"], "bootstrap_draws": 500}}
    run = write_run(tmp_path / "run", spec=spec)
    first = analyze_run(run, homophily_replicates=5)
    assert first.contrasts.frame["contrast"].unique().tolist() == ["adversary"]
    assert first.contrasts.frame["metric"].unique().tolist() == ["delta_alignment"]
    assert first.headline["metric"].tolist() == ["delta_alignment"]
    second = analyze_run(run, homophily_replicates=5)
    pd.testing.assert_frame_equal(first.contrasts.frame, second.contrasts.frame)
    assert not [p for p in run.iterdir() if p.name.startswith(".analysis")]


def test_incomplete_blocks_are_excluded_and_listed(tmp_path, capsys):
    run = write_run(tmp_path / "run", skip=("m1-t1-101-control",))
    assert main(["analyze", str(run), "--homophily-replicates", "5"]) == 0
    assert "excluded" in capsys.readouterr().out
    excluded = pd.read_csv(run / "analysis" / "excluded_blocks.csv")
    assert set(excluded["contrast"]) == {"engagement_likes_minus_control"}
    assert set(excluded["reason"]) == {"missing arm control"}
    assert excluded[["model", "topic_id", "seed"]].drop_duplicates().values.tolist() == [["m1", "t1", 101]]


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("pvsst: error:") and "\n" not in err
    return err


def test_analyze_bad_input_exits_2_with_one_line(tmp_path, capsys):
    assert main(["analyze", str(tmp_path / "missing")]) == 2
    assert "does not exist" in one_line_error(capsys)
    run = write_run(tmp_path / "unknown_arm", spec={"analysis": {"contrasts": ["u=unranked-likes"]}})
    assert main(["analyze", str(run)]) == 2
    assert "unknown arm 'unranked'" in one_line_error(capsys)
    run = write_run(tmp_path / "no_blocks", conditions=("likes", "control"),
                    skip=tuple(f"{m}-{t}-{s}-{c}" for m in ("m1", "m2") for t in ("t1", "t2")
                               for s, c in ((101, "likes"), (211, "control"))))
    assert main(["analyze", str(run)]) == 2
    assert "no complete blocks" in one_line_error(capsys)


def test_stats_paired_bad_input_exits_2_with_one_line(tmp_path, capsys):
    table = tmp_path / "t.csv"
    pd.DataFrame({"model": ["m", "m"], "topic_id": ["t", "t"], "seed": [1, 1],
                  "condition": ["likes", "control"], "y": [1.0, 0.5]}).to_csv(table, index=False)
    base = ["stats", "paired", str(table), "--out", str(tmp_path / "o.csv"), "--strata", "model"]
    assert main(base + ["--metric", "z", "--contrast", "e=likes-control"]) == 2
    assert one_line_error(capsys).endswith("z: missing column")
    assert main(base + ["--metric", "y", "--contrast", "e=likes-unranked"]) == 2
    assert "unknown arm 'unranked'" in one_line_error(capsys)
    assert main(base + ["--metric", "y", "--contrast", "likes-control"]) == 2
    assert "malformed contrast" in one_line_error(capsys)
    assert main(["stats", "paired", str(tmp_path / "none.csv"), "--out", str(tmp_path / "o.csv")]) == 2
    assert "does not exist" in one_line_error(capsys)
    assert main(base + ["--metric", "y", "--contrast", "e=likes-control"]) == 0
    written = pd.read_csv(tmp_path / "o.csv")
    assert written[["stratum_type", "n_blocks", "mean_difference"]].values.tolist() == [
        ["overall", 1, 0.5], ["model", 1, 0.5]]
