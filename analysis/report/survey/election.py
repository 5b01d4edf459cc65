"""The survey report's vote section: every source against the 2016 election, and MRP against the marginal.

:func:`election_markdown` renders ``RUN/analysis/election_scores.csv``
(:mod:`pvsst.analysis.survey.cells.election_scores`): the national shares, the mean absolute state error of
each source against the certified result, and one row per state with the election, the survey, the first
model, MRP, the cell oracle, the national marginal and uniform. :func:`mrp_markdown` states, per question,
whether MRP's state shares come closer to the survey's than the national marginal's do.

Examples
--------
>>> scores = pd.DataFrame({"question": "q", "source": ["mrp", "mrp", "national_marginal", "national_marginal"],
...                        "abs_error": [0.02, 0.04, 0.05, 0.03]})
>>> print(mrp_markdown(scores))
- `q`: MRP mean absolute state error 0.030 against the national marginal's 0.040 (MRP closer by 0.010).
"""
from __future__ import annotations

import pandas as pd

from pvsst.analysis.report.markdown import bullet_list, markdown_table
from pvsst.analysis.report.survey.tables import number
from pvsst.analysis.survey.cells.election import ELECTION, ELECTION_CITATION
from pvsst.analysis.survey.cells.election_scores import SURVEY
from pvsst.analysis.survey.cells.mrp import MRP
from pvsst.analysis.survey.cells.state_scores import CELL_ORACLE, NATIONAL_MARGINAL, UNIFORM

REFERENCES = (SURVEY, MRP, CELL_ORACLE, NATIONAL_MARGINAL, UNIFORM)


def mrp_markdown(scores: pd.DataFrame) -> str:
    """One line per question: MRP's and the national marginal's mean absolute state error (option shares)."""
    lines = []
    for question, part in scores.groupby("question", sort=False):
        errors = part.groupby("source")["abs_error"].mean()
        if MRP not in errors or NATIONAL_MARGINAL not in errors:
            continue
        mrp, marginal = float(errors[MRP]), float(errors[NATIONAL_MARGINAL])
        verdict = (f"MRP closer by {marginal - mrp:.3f}" if mrp < marginal
                   else f"the marginal closer by {mrp - marginal:.3f}")
        lines.append(f"`{question}`: MRP mean absolute state error {mrp:.3f} against the national marginal's "
                     f"{marginal:.3f} ({verdict}).")
    return bullet_list(lines) if lines else ""


def _columns(election: pd.DataFrame) -> list[str]:
    sources = list(dict.fromkeys(election["source"].astype(str)))
    models = [s for s in sources if s not in REFERENCES]
    return models[:1] + [s for s in REFERENCES if s in sources]


def election_markdown(election: pd.DataFrame) -> str:
    """The vote section: national shares, mean absolute state errors and every state, against the election."""
    question, option = str(election["question"].iloc[0]), str(election["option"].iloc[0])
    columns = _columns(election)
    wide = election.pivot_table(index="state", columns="source", values="simulated", aggfunc="first")
    truth = election.drop_duplicates("state").set_index("state")[ELECTION]
    states = election[election["state"] != "US"]
    mae = states.groupby("source")["abs_error"].mean()
    summary = pd.DataFrame([{"source": s, "national share": number(wide.loc["US", s]) if "US" in wide.index
                             and pd.notna(wide.loc["US", s]) else "n/a",
                             "national error": f"{wide.loc['US', s] - truth['US']:+.3f}" if "US" in wide.index
                             and pd.notna(wide.loc["US", s]) else "n/a",
                             "mean |state error|": number(mae.get(s, float("nan"))),
                             "states": int((states["source"] == s).sum())} for s in columns])
    order = ["US"] + sorted(s for s in wide.index if s != "US")
    rows = [{"state": state, "election": number(truth[state]),
             **{s: number(wide.loc[state, s]) if s in wide.columns and pd.notna(wide.loc[state, s]) else "n/a"
                for s in columns}} for state in order if state in truth.index]
    return "\n".join([
        f"### The vote against the 2016 election: `{question}`", "",
        f"Truth: Trump's share of all votes cast per state, e_s = trump_s / (clinton_s + trump_s + others_s) "
        f"({ELECTION_CITATION}); nationally 62,984,828 of 136,669,276 votes (FEC, Federal Elections 2016). "
        f"Each source's share of `{option}` is post-stratified with the population's voters, N_sc t_c with "
        "t_c the share of the cell's survey respondents who reported a vote (the survey's state share counts "
        "voters only already); national: the voter-weighted mean of the states. `analysis/election_scores.csv`.",
        "", markdown_table(summary), "", markdown_table(pd.DataFrame(rows)), "",
        "survey: the survey's raw state share (an opt-in panel, unweighted); mrp: each state's model fitted "
        "without its own respondents; cell_oracle: the survey's answers per cell post-stratified with the census "
        "voters; national_marginal: the survey's national share in every state; uniform: 1 / K. None of them "
        "is a ceiling."])
