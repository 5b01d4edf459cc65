"""Scenario experiments: factorial vignettes on census cells, their calls, their decomposition, bad factors.

The shipped instrument (``experiments/surveys/census_flu_reporting.yaml``) is shrunk for speed: a few
hundred census personas, cells of sex x income band, and two scenario factors of two levels each.
``scripted/planted_income_reporting`` says yes with probability 0.8 above $50,000 of income and 0.2
below, whatever else the prompt says; ``scripted/planted_answer_null`` answers uniformly.
"""
from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import yaml
from cli_checks import refused
from survey_helpers import CASE_LEVEL_NAMES, HOUSEHOLD_SCENARIO_FACTORS, write

from pvsst.analysis.figures.epidemic import reports_vs_infections_figure
from pvsst.analysis.scenarios.bank_table import reporting_bank_table
from pvsst.analysis.scenarios.decisions import decision_table
from pvsst.analysis.scenarios.household_agreement import expected_household_agreement, observed_household_agreement
from pvsst.analysis.store.reader import read_survey_run
from pvsst.core.run_layout import SCENARIOS
from pvsst.experiments.cli import main
from pvsst.experiments.spec.lock import lock_path
from pvsst.experiments.survey.runner import run_survey
from pvsst.experiments.survey.scenarios_section import scenario_list
from pvsst.experiments.survey.spec import load_survey
from pvsst.sim.epidemic.bank import ReportingBank
from pvsst.sim.epidemic.household_chain import chain_household_decisions
from pvsst.sim.epidemic.model import EpidemicModel
from pvsst.sim.epidemic.settings import EpidemicSettings

SHIPPED = "experiments/surveys/census_flu_reporting.yaml"
FACTORS = [
    {"id": "case_level", "levels": [{"id": "none", "text": "No current cases nearby."},
                                    {"id": "over_100", "text": "More than 100 current cases nearby."}]},
    {"id": "framing", "levels": [{"id": "no_news", "text": ""},
                                 {"id": "prosocial", "text": "Reporting protects your family."}]},
]


def small_design(model: str, *, k: int | None = None, n: int = 300, **changes) -> dict:
    """The shipped design on ``n`` census personas, cells of sex x income band, 2 x 2 scenarios; ``k``
    sampled answers per cell x scenario (default: logprobs, one call each)."""
    spec = yaml.safe_load(open(SHIPPED))
    spec.update(model=model, personas={"source": "census", "n": n, "seed": 1, "geography": "US"},
                cells={"attributes": ["sex", "income_band"]}, scenarios={"factors": copy.deepcopy(FACTORS)})
    spec["analysis"]["bootstrap_draws"] = 40
    spec["execution"]["chunk_size"] = 1000
    if k is not None:
        spec["conditions"] = ["persona_profile"]
        spec["cells"]["k"] = k
    spec.update(changes)
    return spec


def test_the_shipped_instrument_is_frozen_and_asks_48_scenarios():
    spec = load_survey(SHIPPED)
    assert lock_path(SHIPPED).is_file()
    scenarios = scenario_list(spec.scenarios)
    assert len(scenarios) == 4 * 4 * 3
    assert scenarios[0].id == "case_level=none;framing=no_news;household=none"
    assert scenarios[-1].vignette.startswith("Your local health department reports more than 100")
    assert scenarios[-1].vignette.endswith("did not get tested or report them.")
    assert main(["prereg", "verify", SHIPPED]) == 0


def test_calls_are_cells_times_scenarios_times_questions_and_a_rerun_makes_none(tmp_path):
    out = tmp_path / "run"
    path = write(tmp_path, small_design("scripted/planted_income_reporting"))
    first = run_survey(path, out, progress=False)
    cells = pd.read_parquet(out / "personas.parquet")
    scenarios = pd.read_parquet(out / SCENARIOS)
    assert list(scenarios.columns) == ["scenario", "case_level", "framing", "vignette"]
    assert len(scenarios) == 4
    assert first.calls == len(cells) * 4 * 1 > 0
    responses = pd.concat(pd.read_parquet(p) for p in out.glob("units/*/responses.parquet"))
    assert set(responses["scenario"]) == set(scenarios["scenario"])
    assert responses.groupby(["persona_id", "scenario"]).size().eq(1).all()
    again = run_survey(path, out, progress=False)
    assert again.calls == 0


def test_the_vignette_comes_before_the_question_and_the_scenario_enters_the_seed(tmp_path):
    out = tmp_path / "run"
    spec = small_design("scripted/planted_income_reporting", k=1, n=60)
    assert main(["survey", "run", str(write(tmp_path, spec)), "--out", str(out)]) == 0
    responses = pd.concat(pd.read_parquet(p) for p in out.glob("units/*/responses.parquet"))
    prompts = pd.concat(pd.read_parquet(p) for p in out.glob("units/*/prompts.parquet")).set_index("prompt_sha256")
    row = responses[responses["scenario"] == "case_level=over_100;framing=prosocial"].iloc[0]
    user = prompts.loc[row["prompt_sha256"], "user"]
    assert "More than 100 current cases nearby.\n\nReporting protects your family.\n\nSuppose you woke up" in user
    one_cell = responses[responses["persona_id"] == row["persona_id"]]
    assert one_cell["request_seed"].nunique() == 4


def _near_zero(shares: pd.DataFrame, factor: str) -> bool:
    """The contribution's interval reaches zero (within 0.001 of R-squared: a basic interval of a
    contribution near its lower bound 0 may end just below it)."""
    return shares.loc[factor, "contribution_low"] <= 0 and shares.loc[factor, "contribution_high"] >= -0.001


def _shares(tmp_path, model: str) -> pd.DataFrame:
    out = tmp_path / "run"
    assert main(["survey", "run", str(write(tmp_path, small_design(model, k=60))), "--out", str(out)]) == 0
    assert main(["survey", "score", str(out)]) == 0
    return pd.read_csv(out / "analysis" / "scenario_shares.csv").set_index("factor")


@pytest.mark.slow
def test_a_planted_income_effect_gets_at_least_95_percent_of_the_explained_variation(tmp_path):
    shares = _shares(tmp_path, "scripted/planted_income_reporting")
    assert main(["report", str(tmp_path / "run"), "--format", "md", "--figures", "png"]) == 0
    assert list((tmp_path / "run" / "report" / "figures").glob("scenario_decomposition_report.*"))
    assert list(shares.index) == ["sex", "income_band", "case_level", "framing", "all factors"]
    assert shares.loc["income_band", "share"] >= 0.95
    assert shares.loc["income_band", "contribution_low"] > 0.1
    for factor in ("sex", "case_level", "framing"):
        assert _near_zero(shares, factor), factor


@pytest.mark.slow
def test_a_model_that_ignores_every_factor_gets_contributions_consistent_with_zero(tmp_path):
    shares = _shares(tmp_path, "scripted/planted_answer_null")
    for factor in ("sex", "income_band", "case_level", "framing", "all factors"):
        assert _near_zero(shares, factor), factor
    assert shares.loc["all factors", "contribution"] < 0.02


MALFORMED = [
    ({"vignette": "${case_level} ${framing} ${weather}"},
     "scenarios.vignette: references factor 'weather' that is not defined (factors: case_level, framing)"),
    ({"vignette": "${case_level}"}, "scenarios.vignette: does not place factor 'framing' (write ${framing})"),
    ({"factors": [*FACTORS, {"id": "household", "levels": []}]},
     "scenarios.factors[2].levels: factor 'household' has no level"),
    ({"combinations": [{"case_level": "none", "framing": "loss"}]},
     "scenarios.combinations[0]: combination names level 'loss' that factor 'framing' does not define "
     "(levels: no_news, prosocial)"),
    ({"combinations": [{"case_level": "none", "framing": "no_news", "weather": "rain"}]},
     "scenarios.combinations[0]: combination names factor 'weather' that is not defined"),
    ({"combinations": [{"case_level": "none"}]},
     "scenarios.combinations[0]: combination gives no level of factor 'framing'"),
    ({"factors": [FACTORS[0], FACTORS[0]]}, "scenarios.factors[1].id: duplicate factor 'case_level'"),
]


@pytest.mark.parametrize("change, message", MALFORMED, ids=lambda v: str(v)[:30])
def test_malformed_scenario_factors_exit_2_with_one_line_and_write_nothing(tmp_path, capsys, change, message):
    spec = small_design("scripted/planted_income_reporting")
    spec["scenarios"].update(change)
    path = write(tmp_path, spec, frozen=False)
    err = refused(capsys, ["prereg", "freeze", str(path)])
    assert err.startswith(f"pvsst: error: {path}: {message}"), err
    assert not lock_path(path).exists()
    out = tmp_path / "run"
    err = refused(capsys, ["survey", "run", str(path), "--out", str(out), "--deviation", "test"])
    assert err.startswith(f"pvsst: error: {path}: {message}"), err
    assert not out.exists()


def test_an_explicit_combination_list_asks_only_those_scenarios(tmp_path):
    out = tmp_path / "run"
    spec = small_design("scripted/planted_income_reporting", n=60)
    spec["scenarios"]["combinations"] = [{"case_level": "over_100", "framing": "no_news"},
                                         {"case_level": "none", "framing": "prosocial"}]
    summary = run_survey(write(tmp_path, spec), out, progress=False)
    scenarios = pd.read_parquet(out / SCENARIOS)
    assert scenarios["scenario"].tolist() == ["case_level=over_100;framing=no_news",
                                              "case_level=none;framing=prosocial"]
    assert summary.calls == 2 * len(pd.read_parquet(out / "personas.parquet"))


HOUSEHOLD_NAMES = {name: name for name in ("none", "member_reported", "member_did_not_report")}


def _household_bank_run(tmp_path):
    """A logprobs run of ``planted_household_reporting`` on 4 x 3 scenarios, and its decision table."""
    out = tmp_path / "run"
    spec = small_design("scripted/planted_household_reporting", n=200,
                        scenarios={"factors": copy.deepcopy(HOUSEHOLD_SCENARIO_FACTORS)})
    assert main(["survey", "run", str(write(tmp_path, spec)), "--out", str(out)]) == 0
    run = read_survey_run(out, ("responses",))
    return decision_table(run.responses, run.personas, run.instrument["spec"], "report")


def test_the_bank_of_a_run_chains_household_decisions_to_their_exact_agreement(tmp_path):
    table = _household_bank_run(tmp_path)
    assert main(["survey", "score", str(tmp_path / "run")]) == 0
    reported = pd.read_csv(tmp_path / "run" / "analysis" / "scenario_households.csv").iloc[0]
    # p = 0.5, a = 0.9, b = 0.1: two adults agree w.p. 0.9; E[both yes] = 0.45, mu = 0.5: correlation 0.8
    assert reported["agreement"] == pytest.approx(0.9, abs=1e-12)
    assert reported["correlation"] == pytest.approx(0.8, abs=1e-12)
    assert reported["households"] == table.drop_duplicates("cell_id")["weight"].sum()
    bank = reporting_bank_table(table, "case_level", CASE_LEVEL_NAMES, "household", HOUSEHOLD_NAMES)
    assert len(bank) == table["cell_id"].nunique() * 4 * 3
    at = bank.query("case_level == '0'").pivot(index="cell_id", columns="household", values="p_yes")
    assert np.allclose(at["none"], 0.5) and np.allclose(at["member_reported"], 0.9)
    assert np.allclose(at["member_did_not_report"], 0.1)
    rng = np.random.default_rng(11)
    households, size = 20_000, 3
    cells = rng.choice(at.index.to_numpy(), households * size)
    household = np.repeat(np.arange(households), size)
    member = np.tile(np.arange(size), households)
    p = {level: at.loc[cells, level].to_numpy() for level in at.columns}
    decided = chain_household_decisions(household, member, p["none"], p["member_reported"],
                                        p["member_did_not_report"], rng)
    exact = expected_household_agreement(household, member, p["none"], p["member_reported"],
                                         p["member_did_not_report"])
    observed = observed_household_agreement(household, decided)
    assert abs(observed.agreement - exact.agreement) < 4 * observed.agreement_se
    # pairs with the first member agree w.p. 0.5 * 0.9 + 0.5 * 0.9 = 0.9; two later members w.p. 0.82
    assert exact.agreement == pytest.approx((2 * 0.9 + 0.82) / 3, abs=1e-12)


def test_the_bank_of_a_run_drives_the_epidemic_model_at_its_expected_yes_share(tmp_path):
    """No transmission: reports per cell at the bank's share; with transmission: reports trail infections."""
    table = _household_bank_run(tmp_path)
    bank = reporting_bank_table(table, "case_level", CASE_LEVEL_NAMES, fixed={"household": "member_reported"})
    cells = sorted(bank["cell_id"].unique())
    rng = np.random.default_rng(5)
    people = pd.DataFrame({"cell_id": rng.choice(cells, 5000), "region": rng.choice(["atl", "sf"], 5000),
                           "household_id": [f"h{i}" for i in range(5000)]})
    settings = EpidemicSettings(days=1, r0=0.0, symptomatic_share=1.0, initial_infected=len(people))
    model = EpidemicModel(people, ReportingBank.from_table(bank, cells), settings, 3)
    model.run()
    decisions = model.decisions()
    by_cell = decisions.groupby("cell_id").agg(n=("reported", "size"), expected=("p_yes", "sum"))
    assert np.allclose(by_cell["expected"] / by_cell["n"], 0.9, atol=1e-12, rtol=0)
    reports = decisions["reported"].mean()
    assert abs(reports - 0.9) < 4 * np.sqrt(0.9 * 0.1 / len(decisions))
    # with transmission: reports trail infections, and the figure draws exactly the region-day rows
    spread = EpidemicModel(people, ReportingBank.from_table(bank, cells),
                           EpidemicSettings(days=30, r0=2.0, initial_infected=20,
                                            household_transmission_share=0.0), 3)
    spread.run()
    days = spread.region_days()
    assert (days[["susceptible", "exposed", "infectious", "recovered"]].sum(axis=1) == days["population"]).all()
    assert 0 < days["reports"].sum() <= days["new_symptomatic"].sum() < days["new_infections"].sum() + 20
    figure = reports_vs_infections_figure(days)
    assert figure.data["reports"].sum() == days["reports"].sum() and len(figure.data) == len(days)
    figure.close()


@pytest.mark.slow
@pytest.mark.embedded
def test_the_shipped_design_runs_on_the_embedded_model_and_is_decomposed(tmp_path, capsys):
    """Plumbing only: the shipped instrument on the embedded SmolLM2-135M, cells of sex on 40 personas,
    its case-level factor (2 levels) and framing factor (2 levels): 2 x 4 logprobs calls."""
    spec = yaml.safe_load(open(SHIPPED))
    spec["personas"].update(n=40, seed=1)
    spec["cells"]["attributes"] = ["sex"]
    factors = spec["scenarios"]["factors"]
    spec["scenarios"]["factors"] = [dict(factors[0], levels=factors[0]["levels"][::3]),
                                    dict(factors[1], levels=factors[1]["levels"][:2])]
    spec["analysis"]["bootstrap_draws"] = 10
    out = tmp_path / "run"
    assert main(["survey", "run", str(write(tmp_path, spec)), "--out", str(out)]) == 0
    responses = pd.concat(pd.read_parquet(p) for p in out.glob("units/*/responses.parquet"))
    assert len(responses) == 2 * 4 and responses["parse_ok"].all()
    assert main(["survey", "score", str(out)]) == 0
    assert "scenario decomposition of report" in capsys.readouterr().out
    shares = pd.read_csv(out / "analysis" / "scenario_shares.csv")
    assert shares["factor"].tolist() == ["sex", "case_level", "framing", "all factors"]
    assert main(["report", str(out), "--format", "md", "--figures", "png"]) == 0
    assert list((out / "report" / "figures").glob("scenario_decomposition_report.*"))
