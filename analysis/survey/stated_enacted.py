"""Do simulated respondents answer as they say they would? Stated against enacted answer distributions.

A survey run can ask one persona the same question two ways: a *stated* distribution (``verbalized``:
the model gives a probability per option) and an *enacted* one (``sample``: the share of its sampled
answers; ``logprobs``: the probability the model puts on each option code as its answer). Both are
taken over the substantive codes and renormalised. For persona ``i`` and question ``q`` with stated
``p_i`` and enacted ``e_i``, the total-variation distance is

.. math::

    \\mathrm{TV}_i = \\tfrac12 \\sum_k |p_{ik} - e_{ik}| \\in [0, 1],

reported per persona and as its population mean, and at the population level as
``TV(mean_i p_i, mean_i e_i)``: individual inconsistency can cancel in the population and vice versa
(Mannekote et al., arXiv 2507.02197, find both). Intervals are percentile bootstraps over personas
(one fresh ``default_rng(seed)`` per model x question; stated and enacted resampled together).

With sampled answers the enacted distribution of one persona is an empirical share over few samples,
so the per-persona TV carries sampling noise even for a perfectly consistent respondent (one sample:
``TV_i = 1 - p_i(answer)``); the population-level TV is much less affected. Compare models at equal
sample counts.

Examples
--------
>>> import pandas as pd
>>> responses = pd.DataFrame({
...     "provider": "m", "persona_id": ["a", "a", "a", "b", "b", "b"], "question": "q",
...     "condition": ["said", "did", "did", "said", "did", "did"],
...     "elicitation": ["verbalized", "sample", "sample"] * 2,
...     "answer": [None, "yes", "yes", None, "yes", "no"],
...     "probabilities": ['{"yes": 0.5, "no": 0.5}', None, None, '{"yes": 1.0, "no": 0.0}', None, None],
...     "parse_ok": True})
>>> per_persona, summary = stated_enacted_consistency(responses, {"q": ["yes", "no"]}, stated="said",
...                                                   enacted="did", draws=100)
>>> per_persona["tv_distance"].tolist()
[0.5, 0.5]
>>> summary[summary["question"] == "q"].set_index("metric")["value"].to_dict()
{'mean_tv_distance': 0.5, 'population_tv_distance': 0.0}
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from pvsst.analysis.stats.paired import require_columns
from pvsst.analysis.survey.fidelity import percentile_interval, resample_index
from pvsst.core.defaults import ANALYSIS_SEED, SURVEY_BOOTSTRAP_DRAWS
from pvsst.core.errors import InputError

STATED_METHODS = ("verbalized",)
ENACTED_METHODS = ("sample", "logprobs")
PER_PERSONA_COLUMNS = ("model", "question", "persona_id", "tv_distance")
SUMMARY_COLUMNS = ("model", "question", "metric", "value", "ci_low", "ci_high", "n_personas", "bootstrap_draws",
                   "bootstrap_seed", "ci_level")


def total_variation(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Total-variation distance ``0.5 * sum_k |p_k - q_k|`` over the last axis.

    Parameters
    ----------
    p, q : numpy.ndarray
        (..., K) distributions (not renormalised here).

    Returns
    -------
    numpy.ndarray
        (...) distances, in [0, 1] for distributions.

    Notes
    -----
    ``TV(p, q) = 1/2 sum_k |p_k - q_k|``.

    References
    ----------
    .. [1] D. A. Levin, Y. Peres and E. L. Wilmer, *Markov Chains and Mixing Times*, section 4.1,
       American Mathematical Society, 2009.

    Examples
    --------
    >>> float(total_variation(np.array([0.5, 0.5, 0.0]), np.array([0.0, 0.5, 0.5])))
    0.5
    """
    return 0.5 * np.abs(np.asarray(p, float) - np.asarray(q, float)).sum(axis=-1)


def persona_distributions(responses: pd.DataFrame, codes: Sequence[str]) -> pd.DataFrame:
    """(persona x code) distributions over ``codes`` of one model, condition and question's responses.

    Sampled answers give each persona its share of parsed answers in ``codes``; distribution replies
    (``probabilities``, JSON) are averaged over a persona's replies. Either is renormalised over ``codes``;
    personas with no mass there are left out.

    Parameters
    ----------
    responses : pandas.DataFrame
        ``persona_id``, ``answer``, ``parse_ok`` and optionally ``probabilities``.
    codes : sequence of str
        The substantive option codes.

    Returns
    -------
    pandas.DataFrame
        Index ``persona_id`` (as text, sorted), one column per code.

    Examples
    --------
    >>> rows = pd.DataFrame({"persona_id": [1, 1, 1, 2], "answer": ["y", "y", "n", "refused"], "parse_ok": True})
    >>> persona_distributions(rows, ["y", "n"]).round(3).values.tolist()
    [[0.667, 0.333]]
    """
    codes = list(codes)
    ok = responses[responses["parse_ok"].astype(bool)]
    if "probabilities" in ok.columns and ok["probabilities"].notna().any():
        rows = ok[ok["probabilities"].notna()]
        frame = pd.DataFrame([json.loads(text) for text in rows["probabilities"]],
                             index=rows["persona_id"].astype(str).to_numpy())
        frame = frame.reindex(columns=codes).fillna(0.0).groupby(level=0).mean()
    else:
        rows = ok[ok["answer"].isin(codes)]
        frame = pd.crosstab(rows["persona_id"].astype(str), pd.Categorical(rows["answer"], categories=codes),
                            dropna=False).reindex(columns=codes, fill_value=0).astype(float)
    mass = frame.sum(axis=1)
    frame = frame[mass > 0].div(mass[mass > 0], axis=0)
    frame.index.name = "persona_id"
    return frame.sort_index()


def _condition_rows(responses: pd.DataFrame, condition: str, methods: tuple[str, ...], role: str) -> pd.DataFrame:
    rows = responses[responses["condition"] == condition]
    if rows.empty:
        known = ", ".join(map(str, pd.unique(responses["condition"])))
        raise InputError("survey consistency", role, f"no responses of condition {condition!r} (conditions: {known})")
    wrong = sorted(set(rows["elicitation"]) - set(methods))
    if wrong:
        raise InputError("survey consistency", role, f"condition {condition!r} is elicited by {wrong[0]}, "
                         f"not {' or '.join(methods)}")
    return rows


def stated_enacted_consistency(responses: pd.DataFrame, codes: Mapping[str, Sequence[str]], *, stated: str,
                               enacted: str, draws: int = SURVEY_BOOTSTRAP_DRAWS, seed: int = ANALYSIS_SEED,
                               level: float = 0.95
                               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-persona and population stated-vs-enacted total-variation distances of a survey run.

    Parameters
    ----------
    responses : pandas.DataFrame
        The run's responses (``provider, condition, elicitation, persona_id, question, answer,
        probabilities, parse_ok``: :func:`pvsst.analysis.store.reader.read_responses`).
    codes : mapping
        Question -> its substantive option codes.
    stated : str
        The condition whose (``verbalized``) distributions are the stated beliefs.
    enacted : str
        The condition whose ``sample`` or ``logprobs`` answers are the enacted ones.
    draws, seed : int
        The percentile bootstrap over personas.
    level : float
        The interval's coverage.

    Returns
    -------
    per_persona : pandas.DataFrame
        :data:`PER_PERSONA_COLUMNS`, one row per model x question x persona with both.
    summary : pandas.DataFrame
        :data:`SUMMARY_COLUMNS`; per model and question (and ``question = "all"``: per persona the mean
        over the questions it has) the metrics ``mean_tv_distance`` and ``population_tv_distance``
        (``"all"``: the mean over questions of the population TVs, without an interval).

    Raises
    ------
    InputError
        A condition with no responses or elicited the wrong way, or no persona x question with both.

    Notes
    -----
    For persona ``i`` with stated ``p_i`` and enacted ``e_i``, ``TV_i = 1/2 sum_k |p_ik - e_ik|``;
    ``mean_tv_distance = mean_i TV_i`` and ``population_tv_distance = TV(mean_i p_i, mean_i e_i)``
    (individual inconsistency can cancel in the population). Intervals: percentile bootstrap over
    personas, stated and enacted resampled together.

    References
    ----------
    .. [1] A. Mannekote et al., "Do Role-Playing Agents Practice What They Preach? Belief-Behavior
       Consistency in LLM-Based Simulations of Human Trust", arXiv 2507.02197, 2025.

    Examples
    --------
    >>> responses = pd.DataFrame({
    ...     "provider": "m", "persona_id": ["a", "a", "b", "b"], "question": "q",
    ...     "condition": ["said", "did"] * 2, "elicitation": ["verbalized", "sample"] * 2,
    ...     "answer": [None, "yes", None, "no"],
    ...     "probabilities": ['{"yes": 0.8, "no": 0.2}', None, '{"yes": 0.2, "no": 0.8}', None],
    ...     "parse_ok": True})
    >>> per_persona, summary = stated_enacted_consistency(responses, {"q": ["yes", "no"]}, stated="said",
    ...                                                   enacted="did", draws=50)
    >>> per_persona["tv_distance"].round(6).tolist()
    [0.2, 0.2]
    >>> summary[summary["question"] == "q"].set_index("metric")["value"].round(6).to_dict()
    {'mean_tv_distance': 0.2, 'population_tv_distance': 0.0}
    """
    require_columns(responses, ("provider", "condition", "elicitation", "persona_id", "question", "answer", "parse_ok"),
                    "responses")
    said = _condition_rows(responses, stated, STATED_METHODS, "stated")
    did = _condition_rows(responses, enacted, ENACTED_METHODS, "enacted")
    per_persona, summary = [], []
    for model in pd.unique(said["provider"]):
        by_persona = []
        for q_index, (question, question_codes) in enumerate(codes.items()):
            p = persona_distributions(said[(said["provider"] == model) & (said["question"] == question)],
                                      question_codes)
            e = persona_distributions(did[(did["provider"] == model) & (did["question"] == question)], question_codes)
            common = p.index.intersection(e.index)
            if common.empty:
                continue
            p, e = p.loc[common].to_numpy(float), e.loc[common].to_numpy(float)
            tv = total_variation(p, e)
            per_persona.append(pd.DataFrame({"model": model, "question": question, "persona_id": common,
                                             "tv_distance": tv}))
            by_persona.append(pd.Series(tv, index=common, name=question))
            index = resample_index(len(tv), draws, np.random.default_rng(np.random.SeedSequence(seed,
                                                                                                spawn_key=(q_index,))))
            mean_draws = tv[index].mean(axis=1)
            population_draws = total_variation(p[index].mean(axis=1), e[index].mean(axis=1))
            summary += _rows(model, question, {"mean_tv_distance": mean_draws,
                                               "population_tv_distance": population_draws}, len(tv), draws, seed, level)
        if by_persona:
            table = pd.concat(by_persona, axis=1)
            persona_mean = table.mean(axis=1).to_numpy(float)
            index = resample_index(len(persona_mean), draws, np.random.default_rng(seed))
            population = [row for row in summary if row["model"] == model and row["metric"] == "population_tv_distance"]
            summary += _rows(model, "all", {"mean_tv_distance": persona_mean[index].mean(axis=1)}, len(persona_mean),
                             draws, seed, level)
            summary.append({"model": model, "question": "all", "metric": "population_tv_distance",
                            "value": float(np.mean([r["value"] for r in population])), "ci_low": float("nan"),
                            "ci_high": float("nan"), "n_personas": len(persona_mean), "bootstrap_draws": draws,
                            "bootstrap_seed": seed, "ci_level": level})
    if not per_persona:
        raise InputError("survey consistency", f"{stated}/{enacted}", "no persona x question has both answers")
    return (pd.concat(per_persona, ignore_index=True)[list(PER_PERSONA_COLUMNS)],
            pd.DataFrame(summary, columns=list(SUMMARY_COLUMNS)))


def _rows(model: str, question: str, values: dict[str, np.ndarray], n: int, draws: int, seed: int,
          level: float) -> list[dict]:
    rows = []
    for metric, series in values.items():
        low, high = percentile_interval(series[1:], level)
        rows.append({"model": model, "question": question, "metric": metric, "value": float(series[0]),
                     "ci_low": low, "ci_high": high, "n_personas": n, "bootstrap_draws": draws,
                     "bootstrap_seed": seed, "ci_level": level})
    return rows
