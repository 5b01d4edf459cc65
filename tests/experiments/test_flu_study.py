"""The shipped influenza-reporting design end to end, as a user runs it from a checkout.

The shipped instrument (``experiments/surveys/census_flu_reporting.yaml``, with its lock) and the shipped
epidemic spec (``experiments/specs/census_flu_epidemic.yaml``) are copied into a checkout-shaped folder;
the survey runs with the CLI's ``--model scripted/planted_income_reporting --n 40`` (recorded
deviations), is scored and reported; the epidemic spec, whose bank is ``../../runs/census_flu_reporting``,
is frozen against that run, run and reported. The planted respondent says yes with probability 0.8 when
the cell's household income is $70,000 or more and 0.2 otherwise, whatever the scenario, so every
expected value below follows from the cells' household incomes and populations. The whole path takes about 40 s on two
busy cores (the tests that use it are marked slow).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from pvsst.core.run_layout import BANK, POPULATION, REPLICATES
from pvsst.experiments.cli import main
from pvsst.experiments.spec.epidemic_study import load_epidemic_spec
from pvsst.personas.geography import REGION_OF_STATE

ROOT = Path(__file__).resolve().parents[2]
SURVEY = "experiments/surveys/census_flu_reporting.yaml"
EPIDEMIC = "experiments/specs/census_flu_epidemic.yaml"
HIGH = {"$70,000 or more"}
SCENARIOS = 4 * 4 * 3


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A checkout-shaped folder after the documented path: survey run, score, report, freeze, run, report."""
    root = tmp_path_factory.mktemp("checkout")
    for name in (SURVEY, SURVEY + ".lock.json", EPIDEMIC):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, root / name)
    bank, run = root / "runs" / "census_flu_reporting", root / "runs" / "census_flu_epidemic"
    assert main(["survey", "run", str(root / SURVEY), "--out", str(bank), "--model",
                 "scripted/planted_income_reporting", "--n", "40"]) == 0
    assert main(["survey", "score", str(bank)]) == 0
    assert main(["report", str(bank), "--format", "md", "--figures", "png"]) == 0
    assert main(["prereg", "freeze", str(root / EPIDEMIC)]) == 0
    assert main(["run", str(root / EPIDEMIC), "--out", str(run)]) == 0
    assert main(["report", str(run), "--format", "md", "--figures", "png"]) == 0
    return bank, run


def planted(income: pd.Series) -> np.ndarray:
    return np.where(income.isin(HIGH), 0.8, 0.2)


def test_the_shipped_instrument_asks_the_studys_cells_and_names_each_attributes_source():
    spec = yaml.safe_load((ROOT / SURVEY).read_text())
    assert spec["cells"]["attributes"] == ["age_group_50", "sex", "race", "hispanic_origin",
                                           "household_income_band", "education_group"]
    header = (ROOT / SURVEY).read_text().split("\nid:")[0]
    for source in ("National Population Projections", "CCES 2016", "famincr", "Hispanic share", "vendored"):
        assert source in header


def test_the_shipped_epidemic_spec_names_the_shipped_runs_bank_and_its_sources():
    spec = load_epidemic_spec(ROOT / EPIDEMIC)
    assert spec.bank_run(Path("experiments/specs")).resolve() == (Path("runs") / "census_flu_reporting").resolve()
    assert spec.bank.fixed == {"framing": "no_news"} and spec.bank.household_factor == "household"
    assert "HH-4" in spec.population.households.source
    header = (ROOT / EPIDEMIC).read_text()
    for source in ("Biggerstaff", "Carrat", "Ferguson", "arXiv 2606.06360"):
        assert source in header


@pytest.mark.slow
def test_the_survey_asks_every_cell_every_scenario_and_reports_rates_by_level_and_region(study):
    bank, _ = study
    cells = pd.read_parquet(bank / "personas.parquet")
    responses = pd.concat(pd.read_parquet(p) for p in (bank / "units").glob("*/responses.parquet"))
    answered = responses[~responses["condition"].str.startswith("reference")]
    assert len(answered) == len(cells) * SCENARIOS
    rates = pd.read_csv(bank / "analysis" / "scenario_rates.csv")
    income = rates[rates["factor"] == "household_income_band"].set_index("level")["rate"]
    assert np.allclose(income, planted(income.index.to_series()), atol=1e-9, rtol=0)
    yes = pd.Series(planted(cells["household_income_band"]), index=cells["persona_id"])
    weight = cells.set_index("persona_id")["population"]
    education = rates[rates["factor"] == "education_group"].set_index("level")["rate"]
    for level, members in cells.groupby("education_group", observed=True)["persona_id"]:
        expected = (yes[members] * weight[members]).sum() / weight[members].sum()
        assert education[level] == pytest.approx(expected, abs=1e-9)
    framing = rates[rates["factor"] == "framing"]
    overall = (yes * weight).sum() / weight.sum()
    assert framing["level"].tolist() == ["no_news", "loss", "prosocial", "statistical"]
    assert np.allclose(framing["rate"], overall, atol=1e-9, rtol=0)
    counts = pd.read_parquet(bank / "cells.parquet").assign(region=lambda f: f["geography"].map(REGION_OF_STATE))
    counts["yes"] = counts["cell_id"].map(yes)
    by_region = counts.groupby("region").apply(lambda f: (f["yes"] * f["population"]).sum() / f["population"].sum(),
                                               include_groups=False)
    region = rates[rates["factor"] == "region"].set_index("level")["rate"]
    assert set(region.index) == set(by_region.index)
    assert np.allclose(region.loc[by_region.index], by_region, atol=1e-9, rtol=0)


@pytest.mark.slow
def test_the_survey_report_shows_the_decomposition_table_and_the_rates(study):
    bank, _ = study
    shares = pd.read_csv(bank / "analysis" / "scenario_shares.csv").set_index("factor")
    assert shares.loc["household_income_band", "share"] > 0.99   # the planted respondent hears income only
    for factor in ("case_level", "framing", "household"):
        assert abs(shares.loc[factor, "share"]) < 1e-9
    text = (bank / "report" / "report.md").read_text()
    assert "### Scenario decomposition" in text and "### Decision rates by factor and region" in text
    row = next(line for line in text.splitlines() if line.startswith("| report") and "| household_income_band " in line
               and "| 1 " in line)
    assert format(shares.loc["household_income_band", "contribution"], ".4g") in row
    assert (bank / "report" / "figures" / "scenario_decomposition_report.png").is_file()


@pytest.mark.slow
def test_the_epidemic_runs_on_the_shipped_bank_and_its_report_draws_reports_against_infections(study):
    bank, run = study
    cells = pd.read_parquet(bank / "personas.parquet").set_index("cell_id")
    table = pd.read_parquet(run / BANK)
    assert len(table) == len(cells) * 4 * 3   # every cell x case level x household level, framing fixed
    assert np.allclose(table["p_yes"], planted(table["cell_id"].map(cells["household_income_band"])), atol=1e-9, rtol=0)
    population = pd.read_parquet(run / POPULATION)
    assert len(population) == 5 * pd.read_parquet(bank / "cells.parquet")["population"].sum()
    homes = population.groupby("household_id")
    assert (homes["state"].nunique() == 1).all() and (homes["household_income_band"].nunique() == 1).all()
    assert (population["household_income_band"] == population["cell_id"].map(cells["household_income_band"])).all()
    assert population["household_size"].max() > 1
    days = pd.concat(pd.read_parquet(p) for p in sorted((run / REPLICATES).glob("*/region_days.parquet")))
    compartments = days[["susceptible", "exposed", "infectious", "recovered"]].sum(axis=1)
    assert (compartments == days["population"]).all()
    regions = pd.read_csv(run / "report" / "regions.csv")
    assert np.allclose(regions["reporting_rate"], regions["reports"] / regions["population"])
    assert regions["reports"].sum() == pytest.approx(days["reports"].sum() / 3)
    text = (run / "report" / "report.md").read_text()
    assert "## Reports against true infections" in text and "## Within-household agreement" in text
    assert (run / "report" / "figures" / "reports_vs_infections.png").is_file()
