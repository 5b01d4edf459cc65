"""The counterfactual persona audit of a survey run whose instrument has an ``audit`` section.

The personas of such a run are matched sets (``audit_role = audit``: one member per level combination
of the varied attributes, ``set_id`` the base persona, ``group`` the combination) and, with
``audit.arity_null``, the arity-matched null (``audit_role = arity_null``: as many copies of each base
persona as there are groups, nothing changed but the request seed, ``group`` = ``seed0``, ...). For
every model (or control) x condition the members' answers go to
:func:`pvsst.analysis.counterfactual.audit.counterfactual_audit`, the null's answers beside them, and
the null's seed groups are also audited on their own (their share gaps are the band a disparity must
leave). Each member contributes one answer per question: its first sample (``sample`` elicitation) or
the modal code of its distribution (``logprobs`` / ``verbalized``; the first code in scale order on a
tie). Option scores are the positions 0..K-1. Under a distribution method the measures are of those
modal answers, which exaggerate a small shift that moves the top option (a planted 0.15 shift reads as
a flip rate of 1.00); ``audit.csv``'s ``note`` says so on each such row (:data:`MODAL_NOTE`).

Writes three tables to ``RUN/analysis/``:

- ``audit.csv``: one row per model x condition x question: flip rate, mean absolute score difference,
  share spread (each with ``_low`` / ``_high``), the omnibus within-set permutation p and its
  Benjamini-Hochberg adjustment across questions, ``flagged``; with the null its measures
  (``null_``), the excess spread over the null with its interval, the arity-null p, its adjustment and
  ``exceeds_null``; ``note`` says why a source has no audit (e.g. fewer than 2 complete sets).
- ``audit_shares.csv``: model x condition x question x group x option: the share and its gap against
  the other groups, with intervals (``audit_role`` = ``audit`` or ``arity_null``).
- ``audit_groups.csv``: model x condition x question x group: the mean score gap against the rest of
  the set, the paired signed-rank p and its Benjamini-Hochberg adjustment across questions x groups.

Intervals are percentile bootstraps over matched sets (``analysis.bootstrap_draws``, seeded by
``analysis.bootstrap_seed``), at level ``1 - audit.alpha``; the permutation tests draw
``audit.permutations`` permutations from the same seed.

Examples
--------
>>> responses = pd.DataFrame({"provider": "m", "condition": "c", "elicitation": "sample", "sample": 0,
...                           "persona_id": ["a", "b"], "question": "q", "answer": ["y", "n"], "parse_ok": True})
>>> personas = pd.DataFrame({"persona_id": ["a", "b"], "set_id": "s1", "group": ["x", "z"],
...                          "audit_role": "audit"})
>>> member_answers(responses, personas, {"q": ["y", "n"]})[["set_id", "group", "answer"]].values.tolist()
[['s1', 'x', 'y'], ['s1', 'z', 'n']]
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pvsst.analysis.counterfactual.audit import audit_tables
from pvsst.analysis.survey.units import DISTRIBUTION_METHODS, ScoredRun
from pvsst.core.atomic import write_csv_tables
from pvsst.core.errors import InputError
from pvsst.core.run_layout import ANALYSIS, PERSONAS, UNITS

AUDIT_FILES = {"questions": "audit.csv", "shares": "audit_shares.csv", "groups": "audit_groups.csv"}
SOURCE_COLUMNS = ("model", "condition", "elicitation")
MODAL_NOTE = ("modal answers: each member's answer is the top option of its distribution, so flip rate and share "
              "gaps count changes of the top option, not shifts of probability (a small shift that moves the top "
              "option reads as a flip rate of 1)")


@dataclass(frozen=True)
class SurveyAudit:
    """The three audit tables of a run (see the module docstring)."""

    questions: pd.DataFrame
    shares: pd.DataFrame
    groups: pd.DataFrame


def _modal(text: str, codes: list[str]) -> str | None:
    probabilities = json.loads(text)
    mass = np.array([float(probabilities.get(code, 0.0) or 0.0) for code in codes])
    return codes[int(np.argmax(mass))] if mass.sum() > 0 else None


def member_answers(responses: pd.DataFrame, personas: pd.DataFrame, codes: dict[str, list[str]]) -> pd.DataFrame:
    """One answer per persona x question of one source: ``set_id, group, audit_role, question, answer``
    (first sample, or the modal code of a distribution; failed calls and other codes left out)."""
    rows = responses[responses["parse_ok"].astype(bool) & responses["question"].isin(list(codes))]
    if "sample" in rows:
        rows = rows[rows["sample"].fillna(0).astype(int) == 0]
    distribution = rows["elicitation"].isin(DISTRIBUTION_METHODS) & rows.get("probabilities",
                                                                              pd.Series(None, index=rows.index)).notna()
    answers = rows["answer"].astype(object).copy()
    if distribution.any():
        answers[distribution] = [_modal(text, codes[q]) for text, q in zip(rows.loc[distribution, "probabilities"],
                                                                          rows.loc[distribution, "question"])]
    out = pd.DataFrame({"persona_id": rows["persona_id"].astype(str).to_numpy(), "question": rows["question"].to_numpy(),
                        "answer": answers.to_numpy()})
    out = out[[a in codes[q] for a, q in zip(out["answer"], out["question"])]]
    members = personas.assign(persona_id=personas["persona_id"].astype(str))[["persona_id", "set_id", "group",
                                                                              "audit_role"]]
    return out.merge(members, on="persona_id", how="inner")[["set_id", "group", "audit_role", "question", "answer"]]


def score_audit(run: ScoredRun) -> SurveyAudit | None:
    """The audit tables of a run (None when its instrument has no ``audit`` section)."""
    audit = run.spec.get("audit")
    if audit is None:
        return None
    settings = run.settings
    codes = {scale.question: list(scale.codes) for scale in run.scales}
    options = {"draws": settings.bootstrap_draws, "seed": settings.bootstrap_seed,
               "permutations": int(audit.get("permutations", 2000)), "alpha": float(audit.get("alpha", 0.05))}
    personas = run.personas
    if "audit_role" not in personas:
        raise InputError(run.file(PERSONAS), "audit_role", "the instrument has an audit section "
                         "but the personas are not matched sets (a run from before audits?)")
    sources = ((source, member_answers(part, personas, codes))
               for source, part in run.responses.groupby(["provider", "condition", "elicitation"], sort=False))
    questions, shares, groups = audit_tables(sources, codes, SOURCE_COLUMNS, **options)
    if questions.empty:
        raise InputError(run.file(""), UNITS, "no responses to audit")
    modal = questions["elicitation"].isin(DISTRIBUTION_METHODS) & (questions["note"].fillna("") == "")
    questions.loc[modal, "note"] = MODAL_NOTE
    return SurveyAudit(questions, shares, groups)


def write_audit(audit: SurveyAudit, run_dir: str | Path) -> list[Path]:
    """Write the audit tables to ``RUN/analysis/`` atomically; return their paths."""
    return write_csv_tables({file: getattr(audit, name) for name, file in AUDIT_FILES.items()},
                            Path(run_dir) / ANALYSIS)
