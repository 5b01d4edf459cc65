"""The epidemic job end to end: a scenario survey run becomes the bank of a preregistered epidemic run.

The shipped instrument (``experiments/surveys/census_flu_reporting.yaml``) is shrunk to 200 census
personas in cells of sex x income band and two scenario factors, the case level (4 levels) and the
household vignette (3 levels), answered by ``scripted/planted_household_reporting``: yes with
probability 0.5 alone, 0.9 after a household member reported and 0.1 after one did not, whatever the
case level. The epidemic spec makes 5 agents of each persona (1,000 agents), groups them into
households within Census regions and runs 3 replicates of 30 days at r0 = 3.
"""
from __future__ import annotations

import copy
import shutil

import numpy as np
import pandas as pd
import pytest
import yaml
from cli_checks import refused
from report_checks import axis_label_problems, legend_problems, texts_outside_canvas
from survey_helpers import CASE_LEVEL_NAMES, HOUSEHOLD_SCENARIO_FACTORS, write

import pvsst
import pvsst.experiments.epidemic.worker as epidemic_worker
from pvsst.analysis.report.epidemic import build_epidemic_report
from pvsst.core.run_layout import BANK, POPULATION, REPLICATES
from pvsst.experiments.cli import main
from pvsst.experiments.epidemic.runner import run_epidemic
from pvsst.experiments.prereg.freeze import freeze, verify
from pvsst.experiments.spec.lock import lock_path, read_lock
from pvsst.sim.epidemic.model import EpidemicModel
from pvsst.sim.epidemic.settings import EpidemicSettings

SHIPPED = "experiments/surveys/census_flu_reporting.yaml"
PLANTED = {"none": 0.5, "member_reported": 0.9, "member_did_not_report": 0.1}
COMPARTMENTS = ["susceptible", "exposed", "infectious", "recovered"]


def epidemic_spec(**changes) -> dict:
    spec = {"schedule": "epidemic", "id": "flu_epidemic", "title": "Flu reporting on a census population",
            "seed": 2026, "replicates": 3,
            "bank": {"run": "bank", "question": "report", "case_factor": "case_level", "case_levels": CASE_LEVEL_NAMES,
                     "household_factor": "household",
                     "household_levels": {name: name for name in PLANTED}},
            "population": {"region": "census_region", "agents_per_persona": 5.0,
                           "households": {"shares": [0.3, 0.4, 0.2, 0.1], "source": "a planted distribution"}},
            "epidemic": {"days": 30, "r0": 3.0, "initial_infected": 20}}
    for key, value in changes.items():
        section, _, field = key.partition("__")
        if field:
            spec[section][field] = value
        else:
            spec[section] = value
    return spec


def write_epidemic(folder, spec: dict, frozen=True):
    path = folder / "epidemic.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    if frozen:
        freeze(path)
    return path


@pytest.fixture(scope="module")
def bank_run(tmp_path_factory):
    """The folder holding the finished scenario survey run ``bank/``."""
    folder = tmp_path_factory.mktemp("epidemic")
    spec = yaml.safe_load(open(SHIPPED))
    spec.update(model="scripted/planted_household_reporting",
                personas={"source": "census", "n": 200, "seed": 1, "geography": "US"},
                cells={"attributes": ["sex", "income_band"]},
                scenarios={"factors": copy.deepcopy(HOUSEHOLD_SCENARIO_FACTORS)})
    spec["analysis"]["bootstrap_draws"] = 20
    spec["execution"]["chunk_size"] = 1000
    assert main(["survey", "run", str(write(folder, spec)), "--out", str(folder / "bank")]) == 0
    return folder


@pytest.fixture(scope="module")
def epidemic_run(bank_run):
    """The frozen epidemic spec beside the bank run, and its one complete run ``run/``."""
    path = write_epidemic(bank_run, epidemic_spec())
    assert main(["run", str(path), "--out", str(bank_run / "run")]) == 0
    return path, bank_run / "run"


def region_days(run) -> pd.DataFrame:
    return pd.concat(pd.read_parquet(p).assign(replicate=p.parent.name)
                     for p in sorted((run / REPLICATES).glob("*/region_days.parquet")))


def test_the_lock_covers_the_spec_and_every_file_of_the_bank_run(epidemic_run):
    path, _ = epidemic_run
    lock = read_lock(path)
    assert lock.spec_id == "flu_epidemic"
    assert {"bank.run/cells.parquet", "bank.run/survey.json", "bank.run/scenarios.parquet",
            "bank.run/personas.parquet", "bank.run/manifest.json"} <= set(lock.materials)
    assert sum(key.endswith("/responses.parquet") for key in lock.materials) >= 1
    assert verify(path).ok


def test_the_run_writes_the_bank_population_and_region_days_with_conserved_compartments(epidemic_run, bank_run):
    _, run = epidemic_run
    manifest = yaml.safe_load((run / "manifest.json").read_text())
    assert manifest["schedule"] == "epidemic" and manifest["agents"] == 1000
    assert [manifest[REPLICATES][r]["status"] for r in sorted(manifest[REPLICATES])] == ["done"] * 3
    cells = pd.read_parquet(bank_run / "bank" / "cells.parquet")
    population = pd.read_parquet(run / POPULATION)
    assert len(population) == 5 * cells["population"].sum() == 1000
    assert set(population["region"]) <= {"Northeast", "Midwest", "South", "West"}
    assert (population.groupby("household_id")["region"].nunique() == 1).all()
    bank = pd.read_parquet(run / BANK)
    assert len(bank) == population["cell_id"].nunique() * 4 * 3
    assert np.allclose(bank["p_yes"], bank["household"].map(PLANTED), atol=1e-9, rtol=0)
    days = region_days(run)
    assert len(days) == 3 * 31 * population["region"].nunique()
    assert (days[COMPARTMENTS].sum(axis=1) == days["population"]).all()
    sizes = population.groupby("region").size()
    assert (days["population"] == days["region"].map(sizes)).all()
    assert np.array_equal(days["reporting_rate"], days["reports"] / days["population"])
    with np.errstate(invalid="ignore"):
        share = days["reported_infectious"] / days["infectious"]
    assert np.allclose(days["reported_share_of_infectious"], share, equal_nan=True)
    assert (days["reports"] <= days["new_symptomatic"]).all()
    infected = days.groupby("replicate")["new_infections"].sum()
    assert (infected > 100).all()   # r0 = 3 reaches well beyond the 20 seeded agents
    assert days.groupby("replicate")["reports"].sum().nunique() > 1   # the replicates' seeds differ


def test_open_run_gives_an_epidemic_runs_tables(epidemic_run):
    _, run = epidemic_run
    tables = pvsst.open_run(run)
    assert tables.kind == "epidemic" and tables.table_names() == ["region_days", "decisions", "bank", "population"]
    pd.testing.assert_frame_equal(tables.region_days.drop(columns="replicate"),
                                  region_days(run).drop(columns="replicate").reset_index(drop=True))
    assert list(tables.decisions["replicate"].unique()) == ["replicate-000", "replicate-001", "replicate-002"]


def test_decisions_are_chained_within_households_at_the_planted_probabilities(epidemic_run):
    _, run = epidemic_run
    decisions = pd.concat(pd.read_parquet(p) for p in (run / REPLICATES).glob("*/decisions.parquet"))
    assert np.array_equal(decisions["p_yes"], decisions["household_level"].map(PLANTED))
    one = pd.read_parquet(run / REPLICATES / "replicate-000" / "decisions.parquet")
    first = one[one["household_level"] == "none"].set_index("household")
    assert first.index.is_unique and set(first.index) == set(one["household"])
    assert (first["day"] == one.groupby("household")["day"].min().loc[first.index]).all()
    later = one[one["household_level"] != "none"]
    told = later["household"].map(first["reported"]).astype(bool)
    expected = np.where(told, "member_reported", "member_did_not_report")
    assert len(later) > 0 and (later["household_level"].to_numpy() == expected).all()


def test_the_same_seed_gives_identical_tables_and_a_second_run_does_no_work(epidemic_run, tmp_path, capsys):
    path, run = epidemic_run
    before = {p: p.read_bytes() for p in run.rglob("*.parquet")}
    capsys.readouterr()
    assert main(["run", str(path), "--out", str(run)]) == 0
    assert "3 replicates: 0 done, 0 failed, 3 skipped" in capsys.readouterr().out
    assert {p: p.read_bytes() for p in run.rglob("*.parquet")} == before
    again = tmp_path / "again"
    assert main(["run", str(path), "--out", str(again)]) == 0
    pd.testing.assert_frame_equal(region_days(again), region_days(run))


def test_an_interrupted_run_resumes_to_the_uninterrupted_tables(epidemic_run, tmp_path, monkeypatch, capsys):
    path, run = epidemic_run
    seeds = epidemic_worker.replicate_seeds(2026, 3)

    class Interrupted(EpidemicModel):
        def run(self):
            if self.given_seed == seeds["replicate-001"]:
                raise KeyboardInterrupt
            super().run()

        def __init__(self, population, bank, settings, seed):
            self.given_seed = seed
            super().__init__(population, bank, settings, seed)

    stopped = tmp_path / "stopped"
    monkeypatch.setattr(epidemic_worker, "EpidemicModel", Interrupted)
    assert main(["run", str(path), "--out", str(stopped)]) == 130
    assert sorted(p.parent.name for p in (stopped / REPLICATES).glob("*/DONE")) == ["replicate-000"]
    monkeypatch.setattr(epidemic_worker, "EpidemicModel", EpidemicModel)
    capsys.readouterr()
    assert main(["run", str(path), "--out", str(stopped)]) == 0
    assert "3 replicates: 2 done, 0 failed, 1 skipped" in capsys.readouterr().out
    pd.testing.assert_frame_equal(region_days(stopped), region_days(run))


def test_the_report_shows_the_region_table_and_the_reports_vs_infections_figure(epidemic_run, tmp_path, monkeypatch):
    _, run = epidemic_run
    copy_of = tmp_path / "run"
    shutil.copytree(run, copy_of)
    assert main(["report", str(copy_of), "--format", "md", "--figures", "png"]) == 0
    report = copy_of / "report"
    assert (report / "figures" / "reports_vs_infections.png").is_file()
    regions = pd.read_csv(report / "regions.csv")
    days = region_days(run)
    population = pd.read_parquet(run / POPULATION).groupby("region").size()
    assert regions.set_index("region")["population"].to_dict() == population.to_dict()
    reports = days.groupby(["replicate", "region"])["reports"].sum().groupby("region").mean()
    assert np.allclose(regions.set_index("region")["reports"], reports)
    assert np.allclose(regions["reporting_rate"], regions["reports"] / regions["population"])
    assert (regions["replicates"] == 3).all()
    text = (report / "report.md").read_text()
    assert "## Reports against true infections" in text and "reports_vs_infections.png" in text
    assert "The figure draws all regions, South, " in text   # the most populous region first after the total
    agreement = pd.read_csv(report / "household_agreement.csv").iloc[0]
    # planted 0.5 alone, 0.9 / 0.1 after: pairs with the first decider agree w.p. 0.9, two later ones w.p. 0.82
    assert 0.82 <= agreement["exact_agreement"] <= 0.9
    assert abs(agreement["observed_agreement"] - agreement["exact_agreement"]) < 4 * agreement["observed_agreement_se"]
    assert agreement["pairs"] >= 100 and "## Within-household agreement" in text
    figure = build_epidemic_report(copy_of, formats=["md"], figure_formats=["png"]).figures[0][1]
    assert list(dict.fromkeys(figure.data["region"]))[0] == "all regions"
    problems = legend_problems("epidemic", figure.figure) + axis_label_problems("epidemic", figure.figure)
    assert problems == [] and f".* {figure.caption}" in (report / "report.md").read_text()
    try:
        assert texts_outside_canvas(monkeypatch, lambda: figure.save(tmp_path / "figures", ["png"])) == []
    finally:
        figure.close()


MALFORMED = [
    ({"epidemic__symptomatic_share": 1.5}, "epidemic.symptomatic_share: Input should be less than or equal to 1"),
    ({"epidemic__r0x": 1.0}, "epidemic.r0x: unknown key"),
    ({"bank__case_levels": {"none": "0", "under_10": "few"}}, "bank.case_levels.under_10: Input should be"),
    ({"bank__case_levels": {"none": "0"}}, "bank.case_levels: case_level: level 'from_10_to_100' has no bank level"),
    ({"bank__fixed": {"weather": "rain"}}, "bank.fixed: weather: no such scenario factor in the run"),
    ({"bank__run": "no_such_run"}, "bank.run: no_such_run is not a survey run folder"),
    ({"bank__question": "vote"}, "bank.question: no question 'vote' in the bank run"),
    ({"population__households": {"shares": [0, 0], "source": "x"}},
     "population.households.shares: the shares need a positive sum"),
    ({"replicates": 0}, "replicates: Input should be greater than or equal to 1"),
    ({"epidemic__household_transmission_share": 0.8},
     "epidemic.household_transmission_share: 2.4 household infections per case need more household contacts"),
    ({"epidemic__initial_infected": 5000}, "epidemic.initial_infected: 5000 exceeds the population (1000)"),
]


@pytest.mark.parametrize("change, message", MALFORMED, ids=lambda v: str(v)[:30])
def test_a_malformed_epidemic_spec_exits_2_with_one_line_and_writes_nothing(bank_run, tmp_path, capsys, change,
                                                                             message):
    folder = tmp_path / "spec"
    folder.mkdir()
    (folder / "bank").symlink_to(bank_run / "bank")
    path = write_epidemic(folder, epidemic_spec(**change), frozen=False)
    out = tmp_path / "out"
    err = refused(capsys, ["run", str(path), "--out", str(out), "--deviation", "test"])
    assert err.startswith(f"pvsst: error: {path}: {message}"), err
    assert not out.exists()
    err = refused(capsys, ["prereg", "freeze", str(path)])
    assert err.startswith(f"pvsst: error: {path}: {message}"), err
    assert not lock_path(path).exists()


def test_an_unfrozen_spec_a_changed_bank_or_a_model_option_is_refused(bank_run, tmp_path, capsys):
    folder = tmp_path / "spec"
    shutil.copytree(bank_run / "bank", folder / "bank")
    path = write_epidemic(folder, epidemic_spec(), frozen=False)
    out = tmp_path / "out"
    err = refused(capsys, ["run", str(path), "--out", str(out)])
    assert err.startswith(f"pvsst: error: {path}: lock: spec is not frozen"), err
    freeze(path)
    err = refused(capsys, ["run", str(path), "--out", str(out), "--budget", "1"])
    assert err.startswith(f"pvsst: error: {path}: --budget: an epidemic spec makes no model call"), err
    with open(folder / "bank" / "survey.json", "a") as survey:
        survey.write("\n")
    err = refused(capsys, ["run", str(path), "--out", str(out)])
    assert err.startswith(f"pvsst: error: {folder / 'bank' / 'survey.json'}: sha256: changed since the spec was "
                          "frozen"), err
    assert not out.exists()


ALTERNATIVES = {
    "seed": 7, "replicates": 2, "population__region": "state", "population__agents_per_persona": 2.0,
    "population__households": {"shares": [0.2, 0.3, 0.5], "source": "another planted distribution"},
    "epidemic__days": 20, "epidemic__r0": 1.5, "epidemic__household_transmission_share": 0.1,
    "epidemic__latent_days": 2.0, "epidemic__infectious_days": 3.0, "epidemic__symptomatic_share": 0.3,
    "epidemic__asymptomatic_infectiousness": 1.0, "epidemic__quarantine_contact_factor": 1.0,
    "epidemic__initial_infected": 40, "epidemic__case_count": "infectious",
    "bank__household_factor": None,
}
"""An alternative value of each field that changes what a run computes (``bank__household_factor: None``
also drops ``household_levels``)."""


def test_every_epidemic_parameter_has_an_alternative_here():
    assert {f"epidemic__{name}" for name in EpidemicSettings.model_fields} <= set(ALTERNATIVES)


@pytest.mark.parametrize("field", sorted(ALTERNATIVES))
def test_each_spec_field_reaches_the_tables_it_governs(epidemic_run, bank_run, tmp_path, field):
    folder = tmp_path / "spec"
    folder.mkdir()
    (folder / "bank").symlink_to(bank_run / "bank")
    spec = epidemic_spec(**{field: ALTERNATIVES[field]})
    if field == "bank__household_factor":
        spec["bank"].pop("household_levels")
        spec["bank"]["fixed"] = {"household": "none"}
    summary = run_epidemic(write_epidemic(folder, spec), tmp_path / "out", progress=False)
    assert summary.exit_code == 0
    changed = tmp_path / "out"
    _, reference = epidemic_run
    tables = [(POPULATION,), (BANK,)] + [(REPLICATES, "replicate-000", "region_days.parquet")]
    differs = [not pd.read_parquet(changed.joinpath(*t)).equals(pd.read_parquet(reference.joinpath(*t)))
               for t in tables]
    replicates = [sorted(p.name for p in (run / REPLICATES).iterdir()) for run in (changed, reference)]
    assert any(differs) or replicates[0] != replicates[1], field


def test_everyone_ill_on_day_0_without_transmission_reports_at_the_banks_yes_share(bank_run, tmp_path):
    """Independent bank (household held at ``none``: P(yes) = 0.5 in every cell): 1,000 decisions on day 0."""
    folder = tmp_path / "spec"
    folder.mkdir()
    (folder / "bank").symlink_to(bank_run / "bank")
    spec = epidemic_spec(epidemic={"days": 1, "r0": 0.0, "symptomatic_share": 1.0, "initial_infected": 1000},
                         replicates=1)
    spec["bank"].pop("household_levels")
    spec["bank"].update(household_factor=None, fixed={"household": "none"})
    out = tmp_path / "out"
    assert main(["run", str(write_epidemic(folder, spec)), "--out", str(out)]) == 0
    decisions = pd.read_parquet(out / REPLICATES / "replicate-000" / "decisions.parquet")
    assert len(decisions) == 1000 and (decisions["day"] == 0).all()
    by_cell = decisions.groupby("cell_id").agg(n=("reported", "size"), expected=("p_yes", "sum"))
    assert np.allclose(by_cell["expected"] / by_cell["n"], 0.5, atol=1e-12, rtol=0)
    days = pd.read_parquet(out / REPLICATES / "replicate-000" / "region_days.parquet")
    rate = days.loc[days["day"] == 0, "reports"].sum() / days.loc[days["day"] == 0, "population"].sum()
    assert abs(rate - 0.5) < 4 * np.sqrt(0.25 / 1000)
    assert days.loc[days["day"] == 1, "new_infections"].sum() == 0


@pytest.mark.slow
@pytest.mark.embedded
def test_the_shipped_design_drives_the_epidemic_on_the_embedded_model(tmp_path, capsys):
    """Plumbing only: the shipped instrument on the embedded SmolLM2-135M, cells of sex on 40 personas,
    its 4 case levels and one framing (no household vignette): 2 x 4 logprobs calls; then the epidemic on
    its bank and the report."""
    spec = yaml.safe_load(open(SHIPPED))
    spec["personas"].update(n=40, seed=1)
    spec["cells"]["attributes"] = ["sex"]
    factors = spec["scenarios"]["factors"]
    spec["scenarios"]["factors"] = [factors[0], dict(factors[1], levels=factors[1]["levels"][:1])]
    spec["analysis"]["bootstrap_draws"] = 10
    assert main(["survey", "run", str(write(tmp_path, spec)), "--out", str(tmp_path / "bank")]) == 0
    epidemic = epidemic_spec(replicates=1, population={"region": "national", "agents_per_persona": 10.0},
                             epidemic={"days": 30, "r0": 3.0, "household_transmission_share": 0.0})
    epidemic["bank"].pop("household_levels")
    epidemic["bank"].update(household_factor=None, fixed={"framing": "no_news"})
    out = tmp_path / "run"
    assert main(["run", str(write_epidemic(tmp_path, epidemic)), "--out", str(out)]) == 0
    bank = pd.read_parquet(out / BANK)
    assert len(bank) == 2 * 4 and bank["p_yes"].between(0, 1).all()
    days = pd.read_parquet(out / REPLICATES / "replicate-000" / "region_days.parquet")
    assert (days[COMPARTMENTS].sum(axis=1) == 400).all()
    assert main(["report", str(out), "--format", "md", "--figures", "png"]) == 0
    assert (out / "report" / "figures" / "reports_vs_infections.png").is_file()
