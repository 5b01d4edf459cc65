"""A counterfactual persona audit: per question, disparity measures, tests and the arity-matched null.

Input is a long answer table with one row per matched-set member and question: ``set_id`` (the matched
set), ``group`` (the member's level of the varied attribute(s), e.g. ``black/female``), ``question``
and ``answer`` (an option code). The arity-matched null has the same layout, the same set ids and as
many groups, made by changing only the seed of each set's base persona (``group`` = the seed label).

Per question (AgentFairBench, arXiv 2606.16723):

- flip rate, mean absolute score difference and share spread
  (:mod:`pvsst.analysis.counterfactual.measures`), each with a percentile bootstrap interval over matched
  sets (a fresh ``default_rng(seed)``; one index matrix ``integers(0, S, size=(draws, S))`` per
  question, shared by every measure of that question);
- per group and option the answer share and its gap against the other groups, with intervals;
- per group the paired signed-rank test of its option scores against the rest of its set, and the
  omnibus within-set permutation test across groups (:mod:`pvsst.analysis.counterfactual.permutation`);
  Benjamini-Hochberg (``statsmodels.stats.multitest.multipletests``, ``fdr_bh``) across questions for
  the omnibus p and across questions x groups for the paired p; a question is ``flagged`` when its
  adjusted omnibus p is below ``alpha``;
- the minimum detectable effect at the audit's own size. ``mde``: the smallest shift of one group that
  gets the question flagged with 80% power (:mod:`pvsst.analysis.counterfactual.power`: the omnibus
  test as a noncentral chi-square at ``alpha / mde_tests``, ``mde_tests`` the size of the BH family);
  ``mde_unit`` says what shifts: one group's share of one option (``share``; sized at the pooled share
  nearest 1/2, ``power_base_share``, the hardest option to move) or one group's mean score (``score``;
  ``power_score_sd`` the residual score SD within sets and groups). Per group and option
  ``share_gap_mde`` = ``(z_{1 - alpha/2} + z_{0.80}) sd*(gap)``, the share gap one two-sided Wald test
  of that gap detects with 80% power before any adjustment (``sd*`` the bootstrap SD of the gap over
  matched sets); per question ``mde_share_gap``, the largest over its groups and options;
- beside them the same measures over the null's seed groups, the excess spread (observed minus null,
  sets resampled jointly) and the one-sided arity-null test (:mod:`pvsst.analysis.counterfactual.null`),
  adjusted by Benjamini-Hochberg across questions: ``exceeds_null`` when below ``alpha``.

Each member contributes one answer per question (e.g. a survey's first sample); with a ``probabilities``
column instead (a ``logprobs`` / ``verbalized`` survey source) each member contributes its whole
distribution and the question is audited by :func:`pvsst.analysis.counterfactual.distributions.audit_question`.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> rows = [{"set_id": s, "group": g, "question": "q", "answer": str(rng.choice(["a", "b"],
...          p=[0.9, 0.1] if g == "x" else [0.3, 0.7]))} for s in range(60) for g in ("x", "y")]
>>> audit = counterfactual_audit(pd.DataFrame(rows), {"q": ["a", "b"]}, draws=500, permutations=499)
>>> row = audit.questions.iloc[0]
>>> int(row["n_sets"]), bool(row["flagged"]), bool(row["flip_rate_low"] > 0.3)
(60, True, True)
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from pvsst.analysis.counterfactual.distribution_power import hardest_probability_shift
from pvsst.analysis.counterfactual.distributions import audit_question
from pvsst.analysis.counterfactual.measures import (
    one_hot,
    set_flips,
    set_score_differences,
    spread_from_shares,
)
from pvsst.analysis.counterfactual.members import question_rows
from pvsst.analysis.counterfactual.null import aligned_sets, arity_null_p, spread_excess
from pvsst.analysis.counterfactual.permutation import PERMUTATIONS, omnibus_permutation_p, paired_group_tests
from pvsst.analysis.counterfactual.power import detectable_shift
from pvsst.analysis.counterfactual.resampling import bootstrap_means, percentile_interval
from pvsst.analysis.counterfactual.share_table import share_rows
from pvsst.core.defaults import ANALYSIS_SEED
from pvsst.core.errors import InputError

ANSWER_COLUMNS = ("set_id", "group", "question", "answer")
MEASURES = ("flip_rate", "mean_abs_score_diff", "share_spread")
MDE_UNITS = {"shares": "share", "scores": "score", "distributions": "probability"}


@dataclass(frozen=True)
class MatchedAnswers:
    """One question's complete matched sets: ``matrix[s, g]`` is the option index member ``g`` answered."""

    question: str
    set_ids: np.ndarray
    groups: tuple[str, ...]
    matrix: np.ndarray
    n_incomplete: int


def matched_answers(answers: pd.DataFrame, question: str, codes: Sequence[str], source: str = "answers"
                    ) -> MatchedAnswers:
    """The (sets x groups) answer matrix of ``question``; sets lacking a member's answer in ``codes`` are
    left out and counted. Two answers of one member (set and group) are an :class:`InputError`.

    Examples
    --------
    >>> table = pd.DataFrame({"set_id": [1, 1, 2], "group": ["x", "y", "x"], "question": "q",
    ...                       "answer": ["b", "a", "a"]})
    >>> m = matched_answers(table, "q", ["a", "b"])
    >>> m.groups, m.matrix.tolist(), m.n_incomplete
    (('x', 'y'), [[1, 0]], 1)
    """
    rows, groups = question_rows(answers, question, ANSWER_COLUMNS, "answer", "answers", source)
    position = {code: i for i, code in enumerate(codes)}
    wide = rows.assign(group=rows["group"].astype(str), option=rows["answer"].map(position)).pivot(
        index="set_id", columns="group", values="option").reindex(columns=list(groups))
    complete = wide.notna().all(axis=1)
    return MatchedAnswers(question, wide.index[complete].to_numpy(), groups,
                          wide[complete].to_numpy(dtype=np.int64), int((~complete).sum()))


@dataclass(frozen=True)
class CounterfactualAudit:
    """The audit's tables and the settings they were computed with.

    ``questions``: one row per question (measures with ``_low`` / ``_high`` interval bounds, tests,
    adjusted p, ``flagged``; with a null also the ``null_`` measures, ``spread_excess``, ``arity_p``,
    ``arity_p_bh`` and ``exceeds_null``). ``shares``: question x group x option (``share``,
    ``share_gap`` with bounds). ``groups``: question x group (``score_gap``, ``paired_p``,
    ``paired_p_bh``).
    """

    questions: pd.DataFrame
    shares: pd.DataFrame
    groups: pd.DataFrame
    bootstrap_draws: int
    bootstrap_seed: int
    permutations: int
    alpha: float


def _measures(m: MatchedAnswers, k: int, scores: np.ndarray, draws: int, seed: int, alpha: float
              ) -> tuple[dict, np.ndarray, tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Observed measures with intervals, plus shares (G, K) with their bounds and bootstrap shares."""
    s, g = m.matrix.shape
    values = np.column_stack([set_flips(m.matrix), set_score_differences(m.matrix, scores),
                              one_hot(m.matrix, k).reshape(s, g * k)])
    observed = values.mean(axis=0)
    boot = bootstrap_means(values, draws, seed)
    shares, boot_shares = observed[2:].reshape(g, k), boot[:, 2:].reshape(draws, g, k)
    point = {"flip_rate": observed[0], "mean_abs_score_diff": observed[1], "share_spread": spread_from_shares(shares)}
    boot_measures = {"flip_rate": boot[:, 0], "mean_abs_score_diff": boot[:, 1],
                     "share_spread": spread_from_shares(boot_shares)}
    out = {}
    for name in MEASURES:
        low, high = percentile_interval(boot_measures[name], alpha)
        out.update({name: float(point[name]), f"{name}_low": float(low), f"{name}_high": float(high)})
    return out, shares, percentile_interval(boot_shares, alpha), boot_shares


def counterfactual_audit(answers: pd.DataFrame, codes: Mapping[str, Sequence[str]], *,
                         null_answers: pd.DataFrame | None = None, scores: Mapping[str, Sequence[float]] | None = None,
                         draws: int = 2000, permutations: int = PERMUTATIONS, seed: int = ANALYSIS_SEED,
                         alpha: float = 0.05, omnibus: str = "shares") -> CounterfactualAudit:
    """Audit every question of ``codes`` (see the module docstring).

    Parameters
    ----------
    answers : ``set_id, group, question, answer`` of the matched sets, or ``set_id, group, question,
        probabilities`` (each member's K probabilities in scale order: the whole-distribution audit of
        :mod:`pvsst.analysis.counterfactual.distributions`, ``omnibus`` unused).
    codes : question -> its option codes in scale order.
    null_answers : the arity-matched null (same layout, seed labels as groups), or None.
    scores : question -> the score of each option (default: positions 0..K-1).
    draws, seed : the percentile bootstrap over matched sets.
    permutations : of each permutation test (its generator is also seeded with ``seed``).
    alpha : of the intervals, the flags and the adjusted p.
    omnibus : the omnibus statistic, ``shares`` (chi-square of answer shares: categorical answers) or
        ``scores`` (centred option scores: ordinal answers whose level varies from set to set);
        see :mod:`pvsst.analysis.counterfactual.permutation`.
    """
    question_rows, all_shares, group_rows = [], [], []
    for question, question_codes in codes.items():
        k = len(question_codes)
        x = np.asarray(scores[question] if scores and question in scores else np.arange(k), dtype=float)
        if x.shape != (k,):
            raise InputError("counterfactual audit", f"scores.{question}", f"needs {k} scores, one per option")
        if "probabilities" in answers.columns:  # whole distributions: measured and tested as they are
            row, question_shares, question_groups = audit_question(
                answers, question, question_codes, x, null_rows=null_answers, draws=draws,
                permutations=permutations, seed=seed, alpha=alpha)
            question_rows.append(row)
            all_shares += question_shares
            group_rows += question_groups
            continue
        m = matched_answers(answers, question, question_codes)
        if len(m.set_ids) < 2 or len(m.groups) < 2:
            raise InputError("counterfactual audit", question, f"needs at least 2 complete matched sets of at least "
                             f"2 groups, has {len(m.set_ids)} sets of {len(m.groups)} groups")
        measured, shares, (share_low, share_high), boot_shares = _measures(m, k, x, draws, seed, alpha)
        row = {"question": question, "n_sets": len(m.set_ids), "n_incomplete": m.n_incomplete,
               "n_groups": len(m.groups), **measured,
               "omnibus_statistic": omnibus,
               "omnibus_p": omnibus_permutation_p(m.matrix, k, permutations=permutations, seed=seed,
                                                  statistic=omnibus, scores=x)}
        question_shares, row["mde_share_gap"] = share_rows(question, m.groups, question_codes, shares,
                                                           (share_low, share_high), boot_shares, alpha)
        row.update(_power_inputs(m, k, x, shares))
        all_shares += question_shares
        score_gaps, paired_p = paired_group_tests(m.matrix, x)
        group_rows += [{"question": question, "group": group, "score_gap": float(score_gaps[gi]),
                        "paired_p": float(paired_p[gi])} for gi, group in enumerate(m.groups)]
        if null_answers is not None:
            row.update(_null_columns(m, null_answers, question, question_codes, x, draws, seed, alpha, permutations))
        question_rows.append(row)
    questions = pd.DataFrame(question_rows)
    questions["omnibus_p_bh"] = _bh(questions["omnibus_p"], alpha)
    questions["flagged"] = questions["omnibus_p_bh"] < alpha
    questions = with_mde(questions, alpha, len(questions))
    if null_answers is not None:
        questions["arity_p_bh"] = _bh(questions["arity_p"], alpha)
        questions["exceeds_null"] = questions["arity_p_bh"] < alpha
    groups = pd.DataFrame(group_rows)
    groups["paired_p_bh"] = _bh(groups["paired_p"], alpha)
    return CounterfactualAudit(questions, pd.DataFrame(all_shares), groups, draws, seed, permutations, alpha)


def _power_inputs(m: MatchedAnswers, k: int, scores: np.ndarray, shares: np.ndarray) -> dict:
    """What the power of the question's omnibus test depends on: K, the pooled share nearest 1/2 and the
    residual score SD (x_sg minus its set's and its group's means, (S - 1)(G - 1) degrees of freedom)."""
    pooled = shares.mean(axis=0)
    x = scores[m.matrix]
    s, g = x.shape
    residual = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
    return {"n_options": k, "power_base_share": float(pooled[np.argmin(np.abs(pooled - 0.5))]),
            "power_score_sd": float(np.sqrt((residual ** 2).sum() / ((s - 1) * (g - 1))))}


def with_mde(questions: pd.DataFrame, alpha: float, tests: int) -> pd.DataFrame:
    """``questions`` with ``mde``, ``mde_unit`` and ``mde_tests``: the shift its omnibus test flags with 80%
    power when the Benjamini-Hochberg family holds ``tests`` tests (NaN where nothing varies to size it).

    Parameters
    ----------
    questions : pandas.DataFrame
        Audit rows with ``n_sets, n_groups, n_options, omnibus_statistic, power_base_share, power_score_sd``
        (``distributions`` rows: ``power_distribution``, sized by
        :func:`pvsst.analysis.counterfactual.distribution_power.hardest_probability_shift`).
    alpha : float
        The false discovery rate.
    tests : int
        The family's size.

    Returns
    -------
    pandas.DataFrame
        A copy with the three columns (rows lacking the inputs get NaN).

    Examples
    --------
    >>> row = pd.DataFrame({"n_sets": [100], "n_groups": [2], "n_options": [2], "omnibus_statistic": ["shares"],
    ...                     "power_base_share": [0.5], "power_score_sd": [0.5]})
    >>> round(float(with_mde(row, 0.05, 1).loc[0, "mde"]), 3)
    0.198
    """
    questions = questions.copy()
    values, units = [], []
    for row in questions.to_dict("records"):
        statistic = row.get("omnibus_statistic")
        if statistic == "distributions":
            values.append(_distribution_mde(row, alpha, max(1, int(tests))))
            units.append(MDE_UNITS[statistic])
            continue
        base, sd = row.get("power_base_share", np.nan), row.get("power_score_sd", np.nan)
        usable = statistic in MDE_UNITS and row.get("n_sets") == row.get("n_sets") and (
            0 < base < 1 if statistic == "shares" else sd > 0)
        values.append(detectable_shift(float(row["n_sets"]), n_groups=int(row["n_groups"]),
                                       n_options=int(row["n_options"]), statistic=statistic, base_share=base,
                                       score_sd=sd, alpha=alpha, tests=max(1, int(tests))) if usable else np.nan)
        units.append(MDE_UNITS.get(statistic, ""))
    questions["mde"], questions["mde_unit"], questions["mde_tests"] = values, units, int(tests)
    return questions


def _distribution_mde(row: dict, alpha: float, tests: int) -> float:
    """The hardest option's detectable probability shift of a distribution row (NaN without its inputs)."""
    inputs = row.get("power_distribution")
    if not isinstance(inputs, str) or row.get("n_sets") != row.get("n_sets"):
        return np.nan
    power = json.loads(inputs)
    shift, _ = hardest_probability_shift(float(row["n_sets"]), n_groups=int(row["n_groups"]), base=power["base"],
                                         covariance=np.array(power["covariance"]), alpha=alpha, tests=tests)
    return shift


def _null_columns(m: MatchedAnswers, null_answers: pd.DataFrame, question: str, codes: Sequence[str],
                  scores: np.ndarray, draws: int, seed: int, alpha: float, permutations: int) -> dict:
    null = matched_answers(null_answers, question, codes, source="null answers")
    at_obs, at_null = aligned_sets(question, m.groups, m.set_ids, null.groups, null.set_ids)
    k = len(codes)
    measured, *_ = _measures(null, k, scores, draws, seed, alpha)
    out = {"null_n_sets": len(null.set_ids), **{f"null_{name}": value for name, value in measured.items()}}
    obs, floor = m.matrix[at_obs], null.matrix[at_null]
    out.update(spread_excess(one_hot(obs, k), one_hot(floor, k), draws, seed, alpha))
    out["arity_p"] = arity_null_p(obs, floor, k, permutations=permutations, seed=seed)
    return out


def _bh(p: pd.Series, alpha: float) -> np.ndarray:
    return multipletests(p.to_numpy(float), alpha=alpha, method="fdr_bh")[1]


def _labelled(frame: pd.DataFrame, columns: Sequence[str], source: tuple, role: str | None = None) -> pd.DataFrame:
    frame = frame.copy()
    for name, value in reversed(list(zip(columns, source))):
        frame.insert(0, name, value)
    if role is not None:
        frame.insert(len(columns), "audit_role", role)
    return frame


def audit_tables(sources: Iterable[tuple[tuple, pd.DataFrame]], codes: Mapping[str, Sequence[str]],
                 columns: Sequence[str], **options) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The question, share and group tables of several audited sources (e.g. model x condition).

    ``sources`` yields (the source's values for ``columns``, its answers with ``audit_role`` =
    ``audit`` or ``arity_null``); each is audited with the null beside it, and the null's seed groups
    on their own (their share gaps are the band a disparity must leave). A source that cannot be audited
    (fewer than 2 complete sets) gets one row per question with a ``note``. ``options`` go to
    :func:`counterfactual_audit`.

    Examples
    --------
    >>> rows = [{"set_id": s, "group": g, "audit_role": "audit", "question": "q", "answer": "ab"[(s + i) % 2]}
    ...         for s in range(6) for i, g in enumerate("xy")]
    >>> questions, shares, groups = audit_tables([(("m",), pd.DataFrame(rows))], {"q": ["a", "b"]}, ["model"],
    ...                                          draws=50, permutations=99)
    >>> questions[["model", "question", "flip_rate"]].values.tolist(), sorted(shares["audit_role"].unique())
    ([['m', 'q', 1.0]], ['audit'])
    """
    questions, shares, groups = [], [], []
    for source, answers in sources:
        observed, null = answers[answers["audit_role"] == "audit"], answers[answers["audit_role"] == "arity_null"]
        try:
            result = counterfactual_audit(observed, codes, null_answers=null if len(null) else None, **options)
            floor = counterfactual_audit(null, codes, **options) if len(null) else None
        except InputError as err:  # e.g. a source whose calls failed: no complete matched set to compare
            questions.append(_labelled(pd.DataFrame([{"question": q, "note": f"no audit: {err}"} for q in codes]),
                                       columns, source))
            continue
        questions.append(_labelled(result.questions.assign(note=""), columns, source))
        shares.append(_labelled(result.shares, columns, source, "audit"))
        groups.append(_labelled(result.groups, columns, source, "audit"))
        if floor is not None:
            shares.append(_labelled(floor.shares, columns, source, "arity_null"))
            groups.append(_labelled(floor.groups, columns, source, "arity_null"))

    def stacked(frames: list[pd.DataFrame]) -> pd.DataFrame:
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return stacked(questions), stacked(shares), stacked(groups)
