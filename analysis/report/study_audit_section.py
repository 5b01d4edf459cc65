"""The study report's counterfactual first-round audit section and figure (``RUN/analysis/study_audit*.csv``).

Examples
--------
>>> questions = pd.DataFrame({"unit_id": ["u"], "model": ["m"], "topic_id": ["t"], "question": ["post_stance"],
...     "n_sets": [50], "n_groups": [4], "flip_rate": [0.4], "flip_rate_low": [0.3], "flip_rate_high": [0.5],
...     "omnibus_p": [0.01], "omnibus_p_bh": [0.02], "flagged": [True], "note": [""]})
>>> "post_stance" in study_audit_markdown(questions)
True
"""
from __future__ import annotations

import pandas as pd

from pvsst.analysis.figures.survey.audit import audit_disparity_figure
from pvsst.analysis.report.figure_sets import FigurePlan
from pvsst.analysis.report.markdown import markdown_table
from pvsst.analysis.report.survey.audit import DEFINITIONS, audit_markdown, power_lines

SOURCE_COLUMNS = ("model", "topic_id")
STUDY_DEFINITIONS = (
    ("post_stance", "the stance a member reported with its first-round post (-3 strongly oppose .. 3 strongly "
                    "support); unusable replies left out."),
    ("net_vote", "a member's likes minus downvotes over its ballot: the same votes_per_voter first-round posts of "
                 "other sets for every member of a set; failed ballots left out."),
    *(d for d in DEFINITIONS if d[0] not in ("omnibus p", "TV")),
    ("omnibus p", "within-set permutation test of T = sum over groups of (sum over sets of the member's score minus "
                  "its set's mean score)^2; adjusted by Benjamini-Hochberg across every model x topic x question "
                  "(omnibus p BH; study_audit.csv's bh_family names each family); flagged when below audit.alpha."),
)


def study_audit_markdown(questions: pd.DataFrame) -> str:
    """The section's Markdown: what was varied and how, the table, and the definitions."""
    return "\n".join([
        "Matched sets of agents differ only in the varied persona attributes (every other attribute, the initial "
        "stance, the request seeds and the ballot equal) and play the trial's first round: a post with its reported "
        "stance, then votes on one shared ballot. The arity-matched null has as many groups made by changing only "
        "the request seed. [interval] = percentile bootstrap over matched sets at level 1 - audit.alpha. Per group: "
        "`analysis/study_audit_shares.csv` (share gaps) and `analysis/study_audit_groups.csv` (score gaps, paired "
        "tests).", "", audit_markdown(questions, SOURCE_COLUMNS), "", *power_lines(questions, SOURCE_COLUMNS),
        "Definitions:", "",
        markdown_table(pd.DataFrame([{"name": n, "definition": d} for n, d in STUDY_DEFINITIONS])), ""])


def study_audit_figure_plan(shares: pd.DataFrame) -> FigurePlan:
    """The disparity figure of the audit's share gaps against the arity-matched null band."""
    return FigurePlan("Counterfactual first-round audit", lambda: audit_disparity_figure(
        shares, SOURCE_COLUMNS, name="study_audit_disparity"),
                      "first-round audit disparity against the arity-matched null")
