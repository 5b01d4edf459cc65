"""The survey report's counterfactual-audit and stated-vs-enacted sections, with their figures.

Reads ``RUN/analysis/audit.csv`` / ``audit_shares.csv`` and ``consistency.csv``, scoring the run first
where the instrument has an audit section (or a stated condition pairs with an enacted one) and the
table is missing, as the report does for ``fidelity.csv``.

Examples
--------
>>> questions = pd.DataFrame({"model": ["m"], "condition": ["c"], "elicitation": ["sample"], "question": ["q"],
...     "n_sets": [50], "n_groups": [4], "flip_rate": [0.4], "flip_rate_low": [0.3], "flip_rate_high": [0.5],
...     "omnibus_p": [0.01], "omnibus_p_bh": [0.02], "flagged": [True], "note": [""]})
>>> [c.strip() for c in audit_markdown(questions).splitlines()[0].split("|")[1:6]]
['model', 'condition', 'question', 'sets x groups', 'flip rate']
>>> audit_markdown(questions).splitlines()[2].split("|")[5].strip()
'0.400 [0.300, 0.500]'
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pvsst.analysis.figures.survey.audit import audit_disparity_figure, consistency_figure
from pvsst.analysis.report.figure_sets import FigurePlan
from pvsst.analysis.report.markdown import markdown_table
from pvsst.analysis.survey.audit import AUDIT_FILES, score_audit, write_audit
from pvsst.analysis.survey.consistency import CONSISTENCY_FILES, score_consistency, write_consistency
from pvsst.analysis.survey.units import ScoredRun
from pvsst.core.run_layout import ANALYSIS

DEFINITIONS = (
    ("flip rate", "share of matched sets whose members' answers are not all equal: F = (1/S) sum_s "
                  "1[A[s,.] not all equal]; for logprobs / verbalized rows the expected flip rate over the members' "
                  "whole distributions, F = (1/S) sum_s (1 - sum_k prod_g p_sgk)."),
    ("MAD", "mean absolute score difference: (1/S) sum_s mean over member pairs g < h of |x(A[s,g]) - x(A[s,h])|, "
            "option scores x = positions 0..K-1 (logprobs / verbalized: the expected |x_A - x_B| of independent "
            "draws from the two members' distributions)."),
    ("share gap", "a group's share of an option minus the mean of the other groups' shares of it (logprobs / "
                  "verbalized: shares are the group's mean probabilities of the option)."),
    ("member TV", "logprobs / verbalized rows: mean over sets of the mean total variation 0.5 sum_k |p_gk - p_hk| "
                  "between two members' distributions."),
    ("share spread", "max over options of (max over groups - min over groups) of the group shares."),
    ("omnibus p", "within-set permutation test of the chi-square of the groups x options counts (logprobs / "
                  "verbalized: of T = sum over groups and options of (P_gk - Pbar_k)^2, the groups' mean "
                  "probabilities against their mean); adjusted by "
                  "Benjamini-Hochberg across every source (model x condition) x question the table shows (omnibus "
                  "p BH; audit.csv's bh_family names each family); flagged when below audit.alpha."),
    ("MDE (80%)", "minimum detectable effect: the smallest shift of one group (its share of one option, sized at "
                  "the pooled share nearest 1/2; its mean score; or, for logprobs / verbalized rows, its mean "
                  "probability of the hardest option to move, sized with the run's member covariance) that the "
                  "omnibus test flags with 80% power at the audit's number of sets, tested at audit.alpha / m for "
                  "the m tests of its BH family (noncentral chi-square; audit.csv's mde, mde_unit, mde_tests). "
                  "`pvsst audit plan` gives the sets a target shift needs."),
    ("arity-matched null", "the same statistics over as many groups made by changing only the request seed of "
                           "each base persona; arity p: one-sided permutation test that the share spread exceeds "
                           "the null's (BH across questions); exceeds null when below audit.alpha."),
    ("TV", "total-variation distance 0.5 sum_k |p_k - e_k| between a persona's stated (verbalized) and enacted "
           "(sampled or log-probability) distribution; mean over personas, and between the population means."),
)


@dataclass(frozen=True)
class AuditTables:
    """The audit and consistency tables a survey report shows (None where the run has none)."""

    questions: pd.DataFrame | None
    shares: pd.DataFrame | None
    consistency: pd.DataFrame | None


def read_audit_tables(run: ScoredRun) -> AuditTables:
    """The run's audit and consistency tables, scoring them first (from ``run``) where they are due and
    missing."""
    analysis = Path(run.path) / ANALYSIS
    questions = shares = consistency = None
    if run.spec.get("audit") is not None:
        if not (analysis / AUDIT_FILES["questions"]).is_file():
            write_audit(score_audit(run), run.path)
        questions, shares = _read(analysis / AUDIT_FILES["questions"]), _read(analysis / AUDIT_FILES["shares"])
    if not (analysis / CONSISTENCY_FILES["summary"]).is_file():
        scored = score_consistency(run)
        if scored is not None:
            write_consistency(scored, run.path)
    if (analysis / CONSISTENCY_FILES["summary"]).is_file():
        consistency = pd.read_csv(analysis / CONSISTENCY_FILES["summary"])
    return AuditTables(questions, shares, consistency)


def _read(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:  # a table with no rows (every source failed)
        return pd.DataFrame()


def _interval(frame: pd.DataFrame, name: str) -> pd.Series:
    if f"{name}_low" not in frame:
        return pd.Series("", index=frame.index)
    return [f"{v:.3f} [{lo:.3f}, {hi:.3f}]" if v == v else "" for v, lo, hi in
            zip(frame[name], frame[f"{name}_low"], frame[f"{name}_high"])]


DISTRIBUTION_MEASURES = {"member_tv": "member TV"}
"""Measures only whole answer distributions (logprobs, verbalized) have."""


def audit_markdown(questions: pd.DataFrame, source_columns: tuple[str, ...] = ("model", "condition")) -> str:
    """One row per source (the values of ``source_columns``) x question: measures with intervals, tests,
    and the arity-matched null beside them."""
    frame = questions.copy()
    shown = pd.DataFrame({**{c: frame[c] for c in source_columns}, "question": frame["question"]})
    shown["sets x groups"] = [f"{s:.0f} x {g:.0f}" if s == s else "" for s, g in
                              zip(frame.get("n_sets", pd.Series(float("nan"), index=frame.index)),
                                  frame.get("n_groups", pd.Series(float("nan"), index=frame.index)))]
    shown["flip rate"] = _interval(frame, "flip_rate")
    for column, label in (("mean_abs_score_diff", "MAD"), ("share_spread", "share spread")):
        if column in frame:
            shown[label] = _interval(frame, column)
    for column, label in DISTRIBUTION_MEASURES.items():
        if column in frame and frame[column].notna().any():
            shown[label] = _interval(frame, column)
    for column, label in (("omnibus_p_bh", "omnibus p (BH)"), ("flagged", "flagged")):
        shown[label] = frame[column] if column in frame else ""
    mde = "mde" if "mde" in frame else "mde_share_gap" if "mde_share_gap" in frame else None
    if mde is not None:
        shown["MDE (80%)"] = [f"{v:.3f}" if v == v else "" for v in frame[mde]]
    if "null_share_spread" in frame:
        shown["null: flip rate"] = _interval(frame, "null_flip_rate")
        shown["null: share spread"] = _interval(frame, "null_share_spread")
        shown["excess spread"] = _interval(frame, "spread_excess")
        shown["arity p (BH)"] = frame["arity_p_bh"]
        shown["exceeds null"] = frame["exceeds_null"]
    if "note" in frame and frame["note"].astype(object).fillna("").astype(str).str.len().any():
        shown["note"] = frame["note"].astype(object).fillna("")
    return markdown_table(shown, floatfmt=".3g")


UNIT_PHRASES = {"share": "in one group's share of an option", "score": "in one group's mean score (score points)",
                "probability": "in one group's mean probability of an option"}


def power_lines(questions: pd.DataFrame, source_columns: tuple[str, ...] = ("model", "condition")) -> list[str]:
    """What each audit result means at its size: a flagged question, or "nothing flagged" with the shift
    the audit detects with 80% power (``mde``, in ``mde_unit``); never "nothing flagged" alone. The last
    line names the Benjamini-Hochberg families.

    Parameters
    ----------
    questions : pandas.DataFrame
        ``audit.csv`` or ``study_audit.csv``.
    source_columns : tuple of str
        The columns that name a source.

    Returns
    -------
    list of str
        Markdown list lines, then a blank line (empty when the table has no flags).

    Examples
    --------
    >>> lines = power_lines(pd.DataFrame({"model": ["m"], "condition": ["c"], "question": ["q"], "flagged": [False],
    ...                                   "mde": [0.214], "mde_unit": ["share"]}))
    >>> lines[0].split(": ")[0]
    '- m | c, q'
    >>> print(lines[0].split(": ")[1])
    nothing flagged; this audit detects shifts of at least 0.214 in one group's share of an option with 80% power.
    """
    if "flagged" not in questions:
        return []
    lines = []
    for row in questions.to_dict("records"):
        note = row.get("note")
        if isinstance(note, str) and note.startswith("no audit"):
            continue
        source = " | ".join(str(row[c]) for c in source_columns) + f", {row['question']}"
        mde = row.get("mde", row.get("mde_share_gap", float("nan")))
        unit = UNIT_PHRASES.get(row.get("mde_unit", "share"), UNIT_PHRASES["share"])
        if mde != mde:
            power = "no shift with 80% power that can be sized (its answers do not vary)"
        elif mde == 0:
            power = f"any shift {unit} with 80% power (members do not vary around their set and group)"
        elif math.isinf(mde):
            power = "no shift with 80% power at this number of sets (`pvsst audit plan` says how many it needs)"
        else:
            power = f"shifts of at least {mde:.3f} {unit} with 80% power"
        if bool(row["flagged"]):
            lines.append(f"- {source}: flagged; at this size the audit detects {power}.")
        else:
            lines.append(f"- {source}: nothing flagged; this audit detects {power}.")
    families = questions["bh_family"].dropna().unique() if "bh_family" in questions else []
    if len(families):
        lines.append(f"- Benjamini-Hochberg families: {'; '.join(map(str, families))}.")
    return lines + [""] if lines else []


def consistency_markdown(summary: pd.DataFrame) -> str:
    """Per model x (stated, enacted) pair and question: the mean per-persona and the population TV."""
    wide = summary.assign(cell=[f"{v:.3f} [{lo:.3f}, {hi:.3f}]" if lo == lo else f"{v:.3f}"
                                for v, lo, hi in zip(summary["value"], summary["ci_low"], summary["ci_high"])])
    table = wide.pivot_table(index=["model", "stated", "enacted", "question", "n_personas"], columns="metric",
                             values="cell", aggfunc="first", sort=False).reset_index()
    table.columns.name = None
    return markdown_table(table)


def audit_sections(tables: AuditTables) -> str:
    """The Markdown of both sections (empty when the run has neither)."""
    lines = []
    if tables.questions is not None:
        lines += ["### Counterfactual persona audit", "",
                  "Matched sets differ only in the varied persona attributes (every other attribute and the request "
                  "seed equal); the arity-matched null has as many groups made by changing only the seed. "
                  "[interval] = percentile bootstrap over matched sets at level 1 - audit.alpha. Per group: "
                  "`analysis/audit_shares.csv` (share gaps) and `analysis/audit_groups.csv` (paired tests).", "",
                  audit_markdown(tables.questions), "", *power_lines(tables.questions)]
    if tables.consistency is not None:
        lines += ["### Stated vs enacted answers", "",
                  "Total-variation distance between each persona's stated (verbalized) and enacted (sampled or "
                  "log-probability) answer distribution, mean over personas, and between the population means; "
                  "[percentile bootstrap interval over personas]. Per persona: `analysis/consistency_personas.csv`.",
                  "", consistency_markdown(tables.consistency), ""]
    if lines:
        lines += ["Definitions:", "", markdown_table(pd.DataFrame([{"name": n, "definition": d}
                                                                   for n, d in DEFINITIONS])), ""]
    return "\n".join(lines)


def audit_figure_plans(tables: AuditTables) -> list[FigurePlan]:
    """The audit's disparity figure and the consistency figure, where the run has them."""
    plans = []
    if tables.shares is not None and len(tables.shares):
        plans.append(FigurePlan("Counterfactual audit", lambda: audit_disparity_figure(tables.shares),
                                "audit disparity against the arity-matched null"))
    if tables.consistency is not None:
        plans.append(FigurePlan("Stated vs enacted", lambda: consistency_figure(tables.consistency),
                                "stated vs enacted consistency"))
    return plans
