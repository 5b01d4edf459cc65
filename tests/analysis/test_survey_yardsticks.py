"""The survey yardsticks on data shaped like real surveys: informative weights with census personas,
an option nobody chose, a model that gives one answer to everyone, a run whose calls all fail, the
noise floor of distribution elicitation, and survey designs (strata, clusters) in the bootstrap.

The weighted and design data are synthetic fixtures written here from fixed seeds (the offline data
has no weighted or clustered survey); no language model is called (scripted providers only).
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from builders import small_instrument
from survey_helpers import write

from pvsst.analysis.store.reader import read_prompts
from pvsst.analysis.survey.fidelity import (
    bootstrap_tables,
    design_resample,
    js_distance,
    resample_index,
)
from pvsst.analysis.survey.shares import answer_shares
from pvsst.analysis.survey.units import read_scored_run
from pvsst.experiments.cli import main
from pvsst.sim.llm.providers.registry import register_scripted_provider

CODES = ("a", "b", "c", "d")


def fidelity_row(table, provider, metric, group="all", question="q"):
    rows = table[(table["provider"] == provider) & (table["metric"] == metric) & (table["group"] == group)
                 & (table["question"] == question)]
    assert len(rows) == 1, (provider, metric, group, question)
    return rows.iloc[0]


# -- 1. survey weights with census personas ---------------------------------------------------------

def education_weighted_frame(n: int = 3000, seed: int = 29) -> pd.DataFrame:
    """Answers and weights both depend on education, which the grouping (sex) does not hold: college
    graduates (30% of the rows) weigh 4, answer mostly ``a``; the others weigh 1, answer mostly ``d``."""
    rng = np.random.default_rng(seed)
    college = rng.random(n) < 0.3
    answer = np.where(college, rng.choice(4, n, p=[0.6, 0.25, 0.1, 0.05]), rng.choice(4, n, p=[0.1, 0.2, 0.3, 0.4]))
    weight = np.where(college, 4.0, 1.0) * rng.uniform(0.9, 1.1, n)
    return pd.DataFrame({"rid": np.arange(n), "female": rng.integers(0, 2, n), "college": college.astype(int),
                         "q": answer + 1, "wt": np.round(weight, 4)})


def census_instrument(path, weight="wt", **data) -> dict:
    return {
        "id": "census_weighted", "title": "Census personas, informative weights",
        "data": {"path": str(path), "respondent_id": "rid", "weight": weight, **data},
        "questions": [{"id": "q", "wording": "Which one?", "column": "q",
                       "options": [{"code": c, "label": c.upper(), "values": [i + 1]} for i, c in enumerate(CODES)]}],
        "personas": {"source": "census", "n": 400, "seed": 0},
        "model": "scripted/echo", "conditions": ["direct"], "controls": ["oracle", "marginal", "uniform"],
        "grouping": [{"axis": "sex", "persona_column": "sex", "data_column": "female",
                      "data_values": {"male": [0], "female": [1]}}],
        "analysis": {"bootstrap_draws": 400, "min_group_n": 10},
        "execution": {"chunk_size": 400}, "seed": 5,
    }


@pytest.fixture(scope="module")
def census_weighted(tmp_path_factory):
    root = tmp_path_factory.mktemp("census_weighted")
    frame = education_weighted_frame()
    frame.to_parquet(root / "data.parquet")
    out = root / "run"
    assert main(["survey", "run", str(write(root, census_instrument(root / "data.parquet"))), "--out", str(out)]) == 0
    assert main(["survey", "score", str(out)]) == 0
    return frame, out, pd.read_csv(out / "analysis" / "fidelity.csv")


def test_census_oracle_reproduces_the_weighted_shares(census_weighted):
    frame, out, fidelity = census_weighted
    weighted = np.bincount(frame["q"] - 1, weights=frame["wt"], minlength=4) / frame["wt"].sum()
    unweighted = np.bincount(frame["q"] - 1, minlength=4) / len(frame)
    # measured with this fixture: weighted (.413 .236 .180 .171), unweighted (.243 .220 .256 .281); the
    # oracle answered (.428 .255 .168 .150), JS 0.032 against a noise floor topping at 0.067 (uniform: 0.189)
    assert weighted[0] > unweighted[0] + 0.1 and weighted[3] < unweighted[3] - 0.08
    shares = answer_shares(read_scored_run(out))
    shares = shares[shares["group"] == "all"]
    human = shares[shares["source"] == "human"].set_index("option")
    np.testing.assert_allclose(human.loc[list(CODES), "share"], weighted, atol=1e-12)
    oracle = shares[shares["provider"] == "scripted/oracle"].set_index("option").loc[list(CODES)]
    # every weighted share lies inside the oracle's own 95% interval ...
    assert ((oracle["ci_low"] <= weighted) & (weighted <= oracle["ci_high"])).all(), (oracle, weighted)
    # ... which is sharp enough to exclude the unweighted shares (where uniform donors would land)
    assert ((unweighted < oracle["ci_low"]) | (unweighted > oracle["ci_high"])).any()
    js = fidelity_row(fidelity, "scripted/oracle", "js_distance")
    floor = fidelity_row(fidelity, "scripted/oracle", "js_noise_floor")
    assert js["value"] <= floor["ci_high"], (js["value"], floor["ci_high"])
    # and a uniform answerer is not within the floor: its JS is past the floor's upper bound
    assert fidelity_row(fidelity, "scripted/uniform", "js_distance")["value"] > floor["ci_high"]
    assert js_distance(weighted, unweighted) > floor["ci_high"]  # the old, unweighted oracle would fail


# -- 2. an option nobody chose, a one-answer model, a run whose calls all fail -----------------------

def test_an_option_no_respondent_chose_is_asked_and_scored(tmp_path, capsys):
    spec = small_instrument(controls=["uniform"], conditions=["direct"])
    spec["questions"][0]["options"].append({"code": "far_too_much", "label": "Far too much", "values": [2]})
    out = tmp_path / "run"
    assert main(["survey", "run", str(write(tmp_path, spec)), "--out", str(out), "--n", "40"]) == 0
    assert main(["survey", "score", str(out)]) == 0
    prompts = read_prompts(out)
    assert prompts["user"].str.contains("Far too much").any()  # asked
    shares = answer_shares(read_scored_run(out))
    overall = shares[(shares["group"] == "all") & (shares["question"] == "natenvir")]
    human = overall[(overall["source"] == "human") & (overall["option"] == "far_too_much")].iloc[0]
    assert human["share"] == 0.0 and human["ci_low"] == 0.0 and human["ci_high"] == 0.0
    assert (
        overall[(overall["provider"] == "scripted/uniform") & (overall["option"] == "far_too_much")]["share"].iloc[0]
        > 0
    )
    fidelity = pd.read_csv(out / "analysis" / "fidelity.csv")
    kl = fidelity_row(fidelity, "scripted/uniform", "kl_human_model", question="natenvir")
    assert np.isfinite([kl["value"], kl["ci_low"], kl["ci_high"]]).all() and kl["value"] > 0


def test_a_one_answer_model_has_eta2_zero_and_a_flag(tmp_path, capsys, first_listed):
    from pvsst.analysis.figures.survey.answers import subgroup_gaps_figure
    from pvsst.analysis.report.survey.tables import eta_frame

    spec = small_instrument(model="scripted/first_listed", controls=[], conditions=["direct"])
    spec["analysis"]["min_group_n"] = 3
    out = tmp_path / "run"
    assert main(["survey", "run", str(write(tmp_path, spec)), "--out", str(out), "--n", "60", "--personas",
                 "respondents"]) == 0
    assert main(["survey", "score", str(out)]) == 0
    fidelity = pd.read_csv(out / "analysis" / "fidelity.csv")
    for axis in ("party", "sex"):
        eta = fidelity_row(fidelity, "scripted/first_listed", "eta2_model", group=axis, question="natenvir")
        assert eta["value"] == 0.0 and "no answer variance" in eta["note"]
        human = fidelity_row(fidelity, "scripted/first_listed", "eta2_human", group=axis, question="natenvir")
        delta = fidelity_row(fidelity, "scripted/first_listed", "delta_eta2", group=axis, question="natenvir")
        assert delta["value"] == pytest.approx(-human["value"]) and "eta2_model" in delta["note"]
    assert fidelity["value"].notna().all()  # no NaN anywhere, let alone unexplained
    table = eta_frame(fidelity)
    assert table["flag"].str.contains("eta2_model: no answer variance").all()
    figure = subgroup_gaps_figure(fidelity)
    model = figure.data[figure.data["source"] != "human"]
    assert model["no_variance"].all() and (model["eta2"] == 0).all()
    assert f"Ringed: {len(model)} point(s)" in figure.caption
    figure.close()


class BrokenProvider:
    """Replies with text that is never valid JSON: every call fails its schema."""

    name = "broken"

    def reply(self, request):
        from pvsst.sim.llm.types import ProviderReply

        return ProviderReply("no")


def test_a_survey_run_whose_calls_all_fail_exits_1_naming_the_model(tmp_path, capsys):
    from pvsst.analysis.report import build_survey_report

    register_scripted_provider("broken", "test_survey_yardsticks:BrokenProvider")
    spec = small_instrument(model="scripted/broken", controls=["uniform"], conditions=["direct"])
    out = tmp_path / "run"
    assert main(["survey", "run", str(write(tmp_path, spec)), "--out", str(out), "--n", "6"]) == 1
    printed = capsys.readouterr().err  # a run that did not succeed says so on stderr
    assert "degraded model scripted/broken | direct: 100.0% of 12 calls failed (threshold 5.0%)" in printed
    assert "2 done, 2 degraded, 0 failed" in printed and "(1 model(s) degraded)" in printed
    manifest = json.loads((out / "manifest.json").read_text())
    assert {u["status"] for k, u in manifest["units"].items() if k.startswith("scripted-broken")} == {"degraded"}
    # a rerun skips the finished units and still exits 1
    assert main(["survey", "run", str(write(tmp_path, spec)), "--out", str(out), "--n", "6"]) == 1
    markdown = build_survey_report(out, formats=["md"], figure_formats=["png"]).markdown_path.read_text()
    assert "`scripted/broken` under `direct` (sample): degraded: 100.0% of calls failed (threshold 5.0%)" in markdown
    assert "nan" not in markdown.lower().replace("nonsubstantive", "")
    assert "n/a (no answers)" in markdown


# -- 3. the noise floor of distribution elicitation on the shipped GSS instrument -------------------

@pytest.mark.slow
def test_marginal_lies_inside_the_distribution_floor_under_logprobs(tmp_path, capsys):
    import yaml

    spec = yaml.safe_load(open("experiments/surveys/gss2018_spending.yaml"))
    spec.update(model="scripted/uniform", controls=["marginal", "oracle"])
    spec["analysis"]["bootstrap_draws"] = 200
    spec["execution"]["chunk_size"] = 200
    out = tmp_path / "run"
    assert main(["survey", "run", str(write(tmp_path, spec)), "--out", str(out), "--elicitation", "logprobs",
                 "--deviation", "logprobs for every condition"]) == 0
    assert main(["survey", "score", str(out)]) == 0
    fidelity = pd.read_csv(out / "analysis" / "fidelity.csv")
    questions = [q["id"] for q in spec["questions"]]
    for question in questions:
        for metric, floor_metric in (("kl_human_model", "kl_noise_floor"), ("js_distance", "js_noise_floor")):
            value = fidelity_row(fidelity, "scripted/marginal", metric, question=question)
            floor = fidelity_row(fidelity, "scripted/marginal", floor_metric, question=question)
            assert floor["ci_low"] <= value["value"] <= floor["ci_high"], (question, metric, value, floor)
            assert "distribution method" in floor["note"]
            # the interval of a value at the boundary holds the value
            assert value["ci_low"] <= value["value"] <= value["ci_high"]
        assert fidelity_row(fidelity, "scripted/marginal", "js_distance", question=question)["value"] < 1e-6


# -- 4. survey designs: clusters within strata -------------------------------------------------------

def test_cluster_resampling_widens_intervals_as_the_design_effect_predicts():
    # 40 clusters of 25 respondents; every cluster answers as one (intra-cluster correlation 1), so the
    # design effect is the cluster size: the standard error of a share grows by sqrt(25) = 5
    clusters, size, draws = 40, 25, 4000
    rng = np.random.default_rng(3)
    cluster_answer = rng.integers(0, 2, clusters)
    answers = np.repeat(cluster_answer, size)
    counts = np.eye(2)[answers]
    labels = np.repeat(np.arange(clusters), size)
    p = answers.mean()

    def share_sd(index):
        table = bootstrap_tables(counts, np.zeros(len(answers), np.int64), 1, index)[1:, 0]
        return (table[:, 0] / table.sum(axis=1)).std()

    simple = share_sd(resample_index(len(answers), draws, np.random.default_rng(1)))
    clustered = share_sd(design_resample(None, labels, draws, np.random.default_rng(1)))
    assert simple == pytest.approx(np.sqrt(p * (1 - p) / len(answers)), rel=0.08)
    assert clustered == pytest.approx(np.sqrt(p * (1 - p) / clusters), rel=0.08)
    assert clustered / simple == pytest.approx(np.sqrt(size), rel=0.12)
    # strata: when each stratum answers as one, resampling within strata leaves the share fixed
    strata = np.repeat([0, 1], len(answers) // 2)
    by_stratum = np.eye(2)[strata]
    index = design_resample(strata, labels, 200, np.random.default_rng(2))
    table = bootstrap_tables(by_stratum, np.zeros(len(answers), np.int64), 1, index)[:, 0]
    assert np.allclose(table[:, 0] / table.sum(axis=1), 0.5)


def test_a_stratified_clustered_survey_widens_the_run_intervals(tmp_path, capsys):
    rng = np.random.default_rng(8)
    n_clusters, size = 60, 20
    cluster = np.repeat(np.arange(n_clusters), size)
    stratum = cluster % 3
    tilt = rng.normal(0, 1.5, n_clusters)[cluster]  # answers shared within clusters
    latent = tilt + rng.normal(0, 1, len(cluster))
    answer = np.digitize(latent, [-1.0, 0.0, 1.0]) + 1
    frame = pd.DataFrame({"rid": np.arange(len(cluster)), "female": rng.integers(0, 2, len(cluster)), "q": answer,
                          "wt": 1.0, "psu": cluster, "stratum": stratum})
    frame.to_parquet(tmp_path / "design.parquet")
    widths = {}
    for name, design in (("simple", {}), ("design", {"strata": "stratum", "cluster": "psu"})):
        spec = census_instrument(tmp_path / "design.parquet", weight=None, **design)
        spec["personas"]["n"] = 100
        spec["controls"] = ["marginal"]
        out = tmp_path / name
        assert main(["survey", "run", str(write(tmp_path, spec, f"{name}.yaml")), "--out", str(out)]) == 0
        shares = answer_shares(read_scored_run(out))
        human = shares[(shares["source"] == "human") & (shares["group"] == "all")]
        widths[name] = (human["ci_high"] - human["ci_low"]).to_numpy()
    # the design effect of a share: 1 + (m - 1) * ICC, from the between-cluster variance of each option
    indicator = np.eye(4)[answer - 1]
    per_cluster = pd.DataFrame(indicator).groupby(cluster).mean().to_numpy()
    p = indicator.mean(axis=0)
    predicted = np.sqrt(per_cluster.var(axis=0, ddof=1) / n_clusters / (p * (1 - p) / len(cluster)))
    ratio = widths["design"] / widths["simple"]
    assert (ratio > 1.5).all()
    np.testing.assert_allclose(ratio, predicted, rtol=0.3)


def test_a_one_question_subgroup_figure_keeps_every_marker_inside_its_axes():
    from pvsst.analysis.figures.survey.answers import subgroup_gaps_figure

    rows = [{"provider": p, "condition": "c", "elicitation": "sample", "question": "q", "group": "sex",
             "metric": m, "value": v, "ci_low": v - 0.01, "ci_high": v + 0.01, "note": ""}
            for p in ("m1", "m2", "m3") for m, v in (("eta2_human", 0.05), ("eta2_model", 0.2))]
    figure = subgroup_gaps_figure(pd.DataFrame(rows))
    ax = figure.axes[0]
    low, high = ax.get_ylim()
    for line in ax.lines:
        y = np.asarray(line.get_ydata(), float)
        assert ((y > low) & (y < high)).all()  # the human diamond and every model marker are drawn inside
    figure.close()
