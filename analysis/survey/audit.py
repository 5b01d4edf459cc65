"""The counterfactual persona audit of a survey run whose instrument has an ``audit`` section.

The personas of such a run are matched sets (``audit_role = audit``: one member per level combination
of the varied attributes, ``set_id`` the base persona, ``group`` the combination) and, with
``audit.arity_null``, the arity-matched null (``audit_role = arity_null``: as many copies of each base
persona as there are groups, nothing changed but the request seed, ``group`` = ``seed0``, ...). For
every model (or control) x condition the members' answers go to
:func:`pvsst.analysis.counterfactual.audit.counterfactual_audit`, the null's answers beside them, and
the null's seed groups are also audited on their own (their share gaps are the band a disparity must
leave). A ``sample`` source's member contributes one answer per question, its first sample; a
``logprobs`` / ``verbalized`` source's member contributes its whole distribution over the scale's codes
(renormalised over them), audited as it is (:mod:`pvsst.analysis.counterfactual.distributions`: the
flip rate is the expected flip rate, the shares are the groups' mean probabilities, the omnibus test
permutes whole distributions, ``member_tv`` is the mean total variation between two members and the
MDE is a shift of one group's probability of one option). Option scores are the positions 0..K-1.

Writes three tables to ``RUN/analysis/``:

- ``audit.csv``: one row per model x condition x question: flip rate, mean absolute score difference,
  share spread (each with ``_low`` / ``_high``), the omnibus within-set permutation p and its
  Benjamini-Hochberg adjustment across every source x question (``bh_family`` names the family and its
  size; :func:`~pvsst.analysis.counterfactual.families.adjusted_across_sources`), ``flagged``, ``mde``
  (the shift of one group's share, or mean probability, of one option flagged with 80% power in that
  family, ``mde_unit``, ``mde_tests``); with the null its measures (``null_``), the excess spread over the null with its
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

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pvsst.analysis.counterfactual.audit import audit_tables
from pvsst.analysis.counterfactual.families import adjusted_across_sources
from pvsst.analysis.survey.units import DISTRIBUTION_METHODS, QuestionScale, ScoredRun, scale_shares
from pvsst.core.atomic import write_csv_tables
from pvsst.core.errors import InputError
from pvsst.core.run_layout import ANALYSIS, PERSONAS, UNITS

AUDIT_FILES = {"questions": "audit.csv", "shares": "audit_shares.csv", "groups": "audit_groups.csv"}
SOURCE_COLUMNS = ("model", "condition", "elicitation")


@dataclass(frozen=True)
class SurveyAudit:
    """The three audit tables of a run (see the module docstring)."""

    questions: pd.DataFrame
    shares: pd.DataFrame
    groups: pd.DataFrame


def member_answers(responses: pd.DataFrame, personas: pd.DataFrame, codes: dict[str, list[str]]) -> pd.DataFrame:
    """One answer per persona x question of one sampled source: ``set_id, group, audit_role, question, answer``
    (its first sample; failed calls and other codes left out)."""
    rows = responses[responses["parse_ok"].astype(bool) & responses["question"].isin(list(codes))]
    if "sample" in rows:
        rows = rows[rows["sample"].fillna(0).astype(int) == 0]
    out = pd.DataFrame({"persona_id": rows["persona_id"].astype(str).to_numpy(),
                        "question": rows["question"].to_numpy(), "answer": rows["answer"].astype(object).to_numpy()})
    out = out[[a in codes[q] for a, q in zip(out["answer"], out["question"])]]
    return _with_members(out, personas)[["set_id", "group", "audit_role", "question", "answer"]]


def member_distributions(responses: pd.DataFrame, personas: pd.DataFrame, codes: dict[str, list[str]]
                         ) -> pd.DataFrame:
    """One probability vector per persona x question of a ``logprobs`` / ``verbalized`` source.

    Parameters
    ----------
    responses : pandas.DataFrame
        One source's responses (``persona_id, question, parse_ok, probabilities``: JSON code -> probability).
    personas : pandas.DataFrame
        ``persona_id, set_id, group, audit_role``.
    codes : dict
        Question -> option codes in scale order.

    Returns
    -------
    pandas.DataFrame
        ``set_id, group, audit_role, question, probabilities`` (a tuple in scale order, renormalised over
        the scale's codes; failed calls and distributions with no mass on the scale left out).

    Examples
    --------
    >>> responses = pd.DataFrame({"persona_id": ["a", "b"], "question": "q", "parse_ok": True,
    ...                           "probabilities": ['{"y": 0.5, "n": 0.3, "dk": 0.2}', '{"y": 0.5, "n": 0.5}']})
    >>> personas = pd.DataFrame({"persona_id": ["a", "b"], "set_id": "s", "group": ["x", "z"],
    ...                          "audit_role": "audit"})
    >>> vectors = member_distributions(responses, personas, {"q": ["y", "n"]})["probabilities"]
    >>> [tuple(round(v, 6) for v in p) for p in vectors]
    [(0.625, 0.375), (0.5, 0.5)]
    """
    frames = []
    for question, asked in responses[responses["question"].isin(list(codes))].groupby("question", sort=False):
        scale = QuestionScale(question, tuple(codes[question]))
        vectors = scale_shares(asked.assign(parse_ok=asked["parse_ok"].astype(bool)), scale)
        frames.append(pd.DataFrame({"persona_id": vectors.index, "question": question,
                                    "probabilities": [tuple(p) for p in vectors.to_numpy(dtype=float).tolist()]}))
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["persona_id", "question", "probabilities"])
    return _with_members(out, personas)[["set_id", "group", "audit_role", "question", "probabilities"]]


def _with_members(rows: pd.DataFrame, personas: pd.DataFrame) -> pd.DataFrame:
    members = personas.assign(persona_id=personas["persona_id"].astype(str))[["persona_id", "set_id", "group",
                                                                              "audit_role"]]
    return rows.merge(members, on="persona_id", how="inner")


def audit_responses(responses: pd.DataFrame, personas: pd.DataFrame, codes: dict[str, list[str]], *, draws: int,
                    seed: int, permutations: int, alpha: float) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The question, share and group tables of every provider x condition x elicitation of ``responses``,
    adjusted across them (:func:`~pvsst.analysis.counterfactual.families.adjusted_across_sources`).

    Parameters
    ----------
    responses : pandas.DataFrame
        ``provider, condition, elicitation, persona_id, question, parse_ok`` with ``answer`` (``sample``) or
        ``probabilities`` (``logprobs`` / ``verbalized``).
    personas : pandas.DataFrame
        ``persona_id, set_id, group, audit_role``.
    codes : dict
        Question -> option codes in scale order.
    draws, seed, permutations, alpha
        The bootstrap, the permutation tests and the level (see the module docstring).

    Returns
    -------
    tuple of pandas.DataFrame
        ``audit.csv``, ``audit_shares.csv`` and ``audit_groups.csv`` (empty when nothing could be audited).

    Examples
    --------
    >>> responses = pd.DataFrame({"provider": "m", "condition": "c", "elicitation": "logprobs", "question": "q",
    ...     "persona_id": list("abcd"), "parse_ok": True, "probabilities": ['{"y": 0.6, "n": 0.4}',
    ...     '{"y": 0.45, "n": 0.55}'] * 2})
    >>> personas = pd.DataFrame({"persona_id": list("abcd"), "set_id": ["s", "s", "t", "t"],
    ...                          "group": ["x", "z"] * 2, "audit_role": "audit"})
    >>> questions, _, _ = audit_responses(responses, personas, {"q": ["y", "n"]}, draws=20, seed=1,
    ...                                   permutations=9, alpha=0.05)
    >>> round(float(questions.loc[0, "flip_rate"]), 3), questions.loc[0, "mde_unit"]
    (0.51, 'probability')
    """
    members = {True: member_distributions, False: member_answers}
    sources = ((source, members[source[2] in DISTRIBUTION_METHODS](part, personas, codes))
               for source, part in responses.groupby(["provider", "condition", "elicitation"], sort=False))
    questions, shares, groups = audit_tables(sources, codes, SOURCE_COLUMNS, draws=draws, seed=seed,
                                             permutations=permutations, alpha=alpha)
    if questions.empty:
        return questions, shares, groups
    questions, groups = adjusted_across_sources(questions, groups, alpha)
    return questions, shares, groups


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
    questions, shares, groups = audit_responses(run.responses, personas, codes, **options)
    if questions.empty:
        raise InputError(run.file(""), UNITS, "no responses to audit")
    return SurveyAudit(questions, shares, groups)


def write_audit(audit: SurveyAudit, run_dir: str | Path) -> list[Path]:
    """Write the audit tables to ``RUN/analysis/`` atomically; return their paths."""
    return write_csv_tables({file: getattr(audit, name) for name, file in AUDIT_FILES.items()},
                            Path(run_dir) / ANALYSIS)
