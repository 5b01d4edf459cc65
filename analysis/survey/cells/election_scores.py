"""Every source's vote share per state and nationally against the certified 2016 result.

Sources (:func:`election_scores`), each post-stratified with the population's voters (the census counts
times each cell's turnout, :func:`pvsst.analysis.survey.cells.election.voter_counts`) where it has cells:
the run's models (their cell answers), ``survey`` (the survey's raw state share, voters only by
construction), ``mrp`` (:mod:`pvsst.analysis.survey.cells.mrp`, each state left out of its own fit),
``cell_oracle``, ``national_marginal`` (the survey's national share in every state) and ``uniform``
(1 / K). Each is compared with Trump's share of all votes cast (:mod:`pvsst.analysis.survey.cells.election`):
``error = simulated - election`` per state (``state`` a postal code) and nationally (``state = US``: the
voter-weighted mean of the state shares against the FEC national share; for ``survey`` and
``national_marginal`` the survey's national share).

Output (``RUN/analysis/election_scores.csv``): columns :data:`ELECTION_COLUMNS`.

Examples
--------
>>> shares = {"model": pd.Series({"OH": 0.5, "TX": 0.5})}
>>> table = score_against_election(shares, pd.Series({"OH": 0.517, "TX": 0.522}), {"model": 0.5}, "q", "trump")
>>> table[["state", "error"]].round(3).values.tolist()
[['OH', -0.017], ['TX', -0.022], ['US', 0.039]]
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.survey.cells.election import ELECTION, election_results, national_trump_share, voter_counts
from pvsst.analysis.survey.cells.estimates import KEYS
from pvsst.analysis.survey.cells.geography import national_shares, state_shares
from pvsst.analysis.survey.cells.mrp import MRP, CellPredictions, poststratified_states
from pvsst.analysis.survey.cells.population import CellPopulation
from pvsst.analysis.survey.cells.poststratification import population_estimates
from pvsst.analysis.survey.cells.state_scores import CELL_ORACLE, NATIONAL_MARGINAL, UNIFORM, cell_oracle
from pvsst.analysis.survey.shares import source_label

SURVEY = "survey"
ELECTION_COLUMNS = ("question", "option", "source", "state", "simulated", ELECTION, "error", "abs_error")


def score_against_election(shares: dict[str, pd.Series], truth: pd.Series, national: dict[str, float],
                           question: str, option: str) -> pd.DataFrame:
    """Rows of :data:`ELECTION_COLUMNS` for every source's state shares and national share.

    ``shares``: source -> state share of ``option``; ``truth``: the election share per state;
    ``national``: source -> its national share (compared with the FEC national share).
    """
    rows = []
    for source, series in shares.items():
        states = [s for s in truth.index if s in series.index and np.isfinite(series[s])]
        part = pd.DataFrame({"source": source, "state": states, "simulated": series[states].to_numpy(float),
                             ELECTION: truth[states].to_numpy(float)})
        if source in national:
            part = pd.concat([part, pd.DataFrame([{"source": source, "state": "US", "simulated": national[source],
                                                   ELECTION: national_trump_share()}])], ignore_index=True)
        rows.append(part)
    table = pd.concat(rows, ignore_index=True).assign(question=question, option=option)
    table["error"] = table["simulated"] - table[ELECTION]
    table["abs_error"] = table["error"].abs()
    return table[list(ELECTION_COLUMNS)]


def _voter_mean(shares: pd.Series, voters: pd.DataFrame) -> float:
    """The voter-weighted mean of state shares (the national post-stratified share)."""
    weight = voters.groupby(voters["state"].astype(str))["count"].sum().reindex(shares.index).fillna(0.0)
    keep = np.isfinite(shares.to_numpy(float)) & (weight.to_numpy() > 0)
    return float(np.average(shares.to_numpy(float)[keep], weights=weight.to_numpy()[keep]))


def election_scores(bank: pd.DataFrame, population: CellPopulation, respondents: pd.DataFrame, question: str,
                    option: str, codes, mrp: CellPredictions | None = None) -> pd.DataFrame:
    """Every source's share of ``option`` against the election (see the module docstring).

    Parameters
    ----------
    bank : pandas.DataFrame
        The run's decision bank (:func:`pvsst.analysis.survey.cells.estimates.decision_bank`).
    population : CellPopulation
        The run's cells and counts.
    respondents : pandas.DataFrame
        The survey's respondents (cell attributes, ``state``, the answers, ``weight``).
    question, option : str
        The vote question and its Trump option.
    codes : sequence
        The question's options.
    mrp : CellPredictions, optional
        The question's leave-state-out MRP predictions (no ``mrp`` rows without them).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`ELECTION_COLUMNS`.
    """
    codes = [str(c) for c in codes]
    attributes = list(population.attributes)
    cells = population.cells.drop(columns="count")
    known = respondents.dropna(subset=attributes)
    voters = voter_counts(population.counts, known, attributes, question, weight="weight")
    answered = respondents[respondents[question].notna()]
    truth = election_results()["trump_share"]
    shares: dict[str, pd.Series] = {}
    national: dict[str, float] = {}
    asked = bank[bank["question"] == question]
    for key, part in asked.groupby(list(KEYS), sort=False):
        kind = "probability" if part["probability"].notna().any() else "count"
        answers = part.drop(columns=[c for c in ("probability", "count") if c != kind])
        answers = answers[answers.groupby("cell_id")[kind].transform("sum") > 0]
        keep = cells["cell_id"].astype(str).isin(set(answers["cell_id"].astype(str)))
        table = population_estimates(answers, voters[voters["cell_id"].astype(str).isin(
            set(answers["cell_id"].astype(str)))], cells[keep], geography="state", options={question: codes})
        table = table[table["option"] == option]
        label = source_label(*key)
        shares[label] = table[table["level"] == "geography"].set_index("domain")["estimate"]
        national[label] = float(table.loc[table["level"] == "national", "estimate"].iloc[0])
    real = state_shares(answered, question, codes, weight="weight")[option]
    shares[SURVEY] = real
    national[SURVEY] = float(national_shares(answered, question, codes, weight="weight")[codes.index(option)])
    if mrp is not None:
        shares[MRP] = poststratified_states(mrp, voters, cells)[option]
        national[MRP] = _voter_mean(shares[MRP], voters)
    answered_known = answered.dropna(subset=attributes)
    if len(answered_known):
        oracle, _ = cell_oracle(answered_known, attributes, question, codes, voters, cells, weight="weight")
        shares[CELL_ORACLE] = oracle[option]
        national[CELL_ORACLE] = _voter_mean(oracle[option], voters)
    marginal = national[SURVEY]
    shares[NATIONAL_MARGINAL] = pd.Series(marginal, index=truth.index)
    national[NATIONAL_MARGINAL] = marginal
    shares[UNIFORM] = pd.Series(1.0 / len(codes), index=truth.index)
    national[UNIFORM] = 1.0 / len(codes)
    return score_against_election(shares, truth, national, question, option)

