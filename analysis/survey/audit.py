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
a flip rate of 1.00); ``audit.csv``'s ``note`` says so on each such row (:data:`MODAL_NOTE`), and beside
them the measures on whole distributions (:func:`distribution_measures`): ``expected_flip_rate`` (the
chance that members' answers drawn from their distributions differ) and ``member_tv`` (the mean total
variation between two members' distributions), with intervals.

Writes three tables to ``RUN/analysis/``:

- ``audit.csv``: one row per model x condition x question: flip rate, mean absolute score difference,
  share spread (each with ``_low`` / ``_high``), the omnibus within-set permutation p and its
  Benjamini-Hochberg adjustment across every source x question (``bh_family`` names the family and its
  size; :func:`~pvsst.analysis.counterfactual.families.adjusted_across_sources`), ``flagged``, ``mde``
  (the shift of one group's share of one option flagged with 80% power in that family, ``mde_unit``,
  ``mde_tests``); with the null its measures (``null_``), the excess spread over the null with its
  interval, the arity-null p, its adjustment and ``exceeds_null``; ``note`` says why a source has no
  audit (e.g. fewer than 2 complete sets).
- ``audit_shares.csv``: model x condition x question x group x option: the share and its gap against
  the other groups, with intervals (``audit_role`` = ``audit`` or ``arity_null``).
- ``audit_groups.csv``: model x condition x question x group: the mean score gap against the rest of
  the set, the paired signed-rank p and its Benjamini-Hochberg adjustment across every source x question x group.

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
from pvsst.analysis.counterfactual.families import adjusted_across_sources
from pvsst.analysis.survey.units import DISTRIBUTION_METHODS, ScoredRun
from pvsst.core.atomic import write_csv_tables
from pvsst.core.errors import InputError
from pvsst.core.run_layout import ANALYSIS, PERSONAS, UNITS

AUDIT_FILES = {"questions": "audit.csv", "shares": "audit_shares.csv", "groups": "audit_groups.csv"}
SOURCE_COLUMNS = ("model", "condition", "elicitation")
MODAL_NOTE = ("modal answers: each member's answer is the top option of its distribution, so flip rate and share "
              "gaps count changes of the top option, not shifts of probability (a small shift that moves the top "
              "option reads as a flip rate of 1); expected_flip_rate and member_tv measure the whole distributions")


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
    out = pd.DataFrame(
        {
            "persona_id": rows["persona_id"].astype(str).to_numpy(),
            "question": rows["question"].to_numpy(),
            "answer": answers.to_numpy(),
        }
    )
    out = out[[a in codes[q] for a, q in zip(out["answer"], out["question"])]]
    members = personas.assign(persona_id=personas["persona_id"].astype(str))[["persona_id", "set_id", "group",
                                                                              "audit_role"]]
    return out.merge(members, on="persona_id", how="inner")[["set_id", "group", "audit_role", "question", "answer"]]


def distribution_measures(responses: pd.DataFrame, personas: pd.DataFrame, codes: dict[str, list[str]],
                          draws: int, seed: int, alpha: float) -> pd.DataFrame:
    """Audit measures on the members' whole answer distributions (``logprobs`` / ``verbalized``), per question.

    Parameters
    ----------
    responses : pandas.DataFrame
        One source's responses (``persona_id, question, parse_ok, probabilities``).
    personas : pandas.DataFrame
        ``persona_id, set_id, group, audit_role``.
    codes : dict
        Question -> option codes in scale order.
    draws, seed, alpha : int, int, float
        The percentile bootstrap over matched sets and its level ``1 - alpha``.

    Returns
    -------
    pandas.DataFrame
        ``question``, ``expected_flip_rate`` = mean over sets of ``1 - sum_k prod_g p_gk`` (the chance the
        members' answers, each drawn from its distribution, are not all equal) and ``member_tv`` = mean
        over sets of the mean total variation between two members' distributions, each with ``_low`` /
        ``_high``; one row per question with at least 2 complete sets.

    Examples
    --------
    >>> import json
    >>> responses = pd.DataFrame({"persona_id": ["a", "b", "c", "d"], "question": "q", "parse_ok": True,
    ...     "probabilities": [json.dumps(p) for p in ({"y": 0.6, "n": 0.4}, {"y": 0.45, "n": 0.55}) * 2]})
    >>> personas = pd.DataFrame({"persona_id": list("abcd"), "set_id": ["s", "s", "t", "t"],
    ...                          "group": ["x", "z"] * 2, "audit_role": "audit"})
    >>> row = distribution_measures(responses, personas, {"q": ["y", "n"]}, 50, 1, 0.05).iloc[0]
    >>> round(float(row["expected_flip_rate"]), 3), round(float(row["member_tv"]), 3)
    (0.51, 0.15)
    """
    rows = responses[responses["parse_ok"].astype(bool) & responses["probabilities"].notna()
                     & responses["question"].isin(list(codes))]
    members = personas.assign(persona_id=personas["persona_id"].astype(str))
    members = members[members["audit_role"] == "audit"].set_index("persona_id")[["set_id", "group"]]
    out = []
    for question, asked in rows.groupby("question", sort=False):
        options = codes[question]
        mass = np.array([[float(json.loads(t).get(c, 0.0) or 0.0) for c in options] for t in asked["probabilities"]])
        keep = mass.sum(axis=1) > 0
        frame = members.reindex(asked["persona_id"].astype(str).to_numpy())[keep]
        p = mass[keep] / mass[keep].sum(axis=1, keepdims=True)
        known = frame["set_id"].notna().to_numpy()
        frame, p = frame[known], p[known]
        groups = sorted(frame["group"].astype(str).unique())
        sets = frame.groupby("set_id")["group"].nunique()
        complete = sets[sets == len(groups)].index
        if len(groups) < 2 or len(complete) < 2:
            continue
        cube = np.full((len(complete), len(groups), len(options)), np.nan)
        s_index = pd.Index(complete).get_indexer(frame["set_id"])
        g_index = pd.Index(groups).get_indexer(frame["group"].astype(str))
        inside = s_index >= 0
        cube[s_index[inside], g_index[inside]] = p[inside]
        flips = 1.0 - np.prod(cube, axis=1).sum(axis=1)
        a, b = np.triu_indices(len(groups), k=1)
        tv = (0.5 * np.abs(cube[:, a] - cube[:, b]).sum(axis=2)).mean(axis=1)
        values = np.column_stack([flips, tv])
        index = np.random.default_rng(seed).integers(0, len(values), size=(draws, len(values)))
        boot = values[index].mean(axis=1)
        low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2], axis=0)
        observed = values.mean(axis=0)
        out.append({"question": question, "expected_flip_rate": observed[0], "expected_flip_rate_low": low[0],
                    "expected_flip_rate_high": high[0], "member_tv": observed[1], "member_tv_low": low[1],
                    "member_tv_high": high[1]})
    return pd.DataFrame(out)


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
    questions, groups = adjusted_across_sources(questions, groups, options["alpha"])
    whole = [distribution_measures(part, personas, codes, options["draws"], options["seed"], options["alpha"]).assign(
        model=source[0], condition=source[1], elicitation=source[2])
        for source, part in run.responses.groupby(["provider", "condition", "elicitation"], sort=False)
        if source[2] in DISTRIBUTION_METHODS]
    whole = [frame for frame in whole if len(frame)]
    if whole:
        questions = questions.merge(pd.concat(whole, ignore_index=True), on=[*SOURCE_COLUMNS, "question"], how="left")
    modal = questions["elicitation"].isin(DISTRIBUTION_METHODS) & (questions["note"].fillna("") == "")
    questions.loc[modal, "note"] = MODAL_NOTE
    return SurveyAudit(questions, shares, groups)


def write_audit(audit: SurveyAudit, run_dir: str | Path) -> list[Path]:
    """Write the audit tables to ``RUN/analysis/`` atomically; return their paths."""
    return write_csv_tables({file: getattr(audit, name) for name, file in AUDIT_FILES.items()},
                            Path(run_dir) / ANALYSIS)
