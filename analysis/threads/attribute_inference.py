"""Scoring attribute guesses against the personas' true attributes, beside a majority and a random baseline.

Reads the guesses table of :mod:`pvsst.sim.judges.attribute_judge` (``judge, author, attribute, rank,
guess, ...``) and the personas' attributes (an ``agents`` table: ``persona_id`` plus attribute columns,
:mod:`pvsst.personas.inferable`). For each judge and attribute, over the ``n`` authors judged on it:

- a guess is correct when it equals the true label (categorical) or lies within ``age_tolerance`` years
  of the true age (age); ``top1`` is the share of authors whose first guess is correct, ``top3`` the
  share with a correct guess among the first three (SynthPAI's top-1 / top-3 accuracy). A failed call
  (``rank`` 0, no guess) counts as wrong; ``n_failed`` says how many;
- ``top1_low``/``top1_high`` (and top-3's): the 95% Wilson score interval (Wilson 1927, "Probable
  inference, the law of succession, and statistical inference", JASA 22; ``statsmodels``'
  ``proportion_confint``), its coverage checked by simulation in the tests;
- **majority baseline**: the best constant guesses in hindsight: the most common true label (top-1) and
  the three most common (top-3); for age, the one age (three ages) whose +-tolerance windows hold the
  most true ages, found exactly (:func:`best_window_coverage`). In-sample, so optimistic for the baseline;
- **random baseline**: guesses drawn uniformly without replacement from the labels (``K`` labels: top-1
  ``1/K``, top-3 ``min(3, K)/K``) or from the ages of :data:`pvsst.personas.inferable.AGE_RANGE`
  (author ``a``: ``m_a`` of the ``M`` ages lie within tolerance, top-1 ``m_a/M``, top-3
  ``1 - C(M - m_a, 3)/C(M, 3)``), averaged over the authors; ``random_*_low``/``_high`` are the 2.5% and
  97.5% quantiles of the accuracy of :data:`RANDOM_DRAWS` simulated random guessers on the same authors
  (seeded): a judge inside that range is not distinguishable from chance.

Examples
--------
>>> import pandas as pd
>>> guesses = pd.DataFrame({"judge": "m", "author": ["a", "b", "b"], "attribute": "sex", "rank": [1, 1, 2],
...                         "guess": ["female", "female", "male"]})
>>> agents = pd.DataFrame({"persona_id": ["a", "b"], "sex": ["female", "male"]})
>>> table = attribute_inference_table(guesses, agents)
>>> table[["n_authors", "top1", "top3", "majority_top1", "random_top1"]].values.tolist()
[[2.0, 0.5, 1.0, 0.5, 0.5]]
"""
from __future__ import annotations

from math import comb

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from pvsst.analysis.threads.shape import require_columns
from pvsst.personas.inferable import AGE_RANGE, AGE_TOLERANCE_YEARS, age_correct, get_attribute, true_label

RANDOM_DRAWS = 10_000
TOP = 3
SCORED_COLUMNS = ("judge", "author", "attribute", "truth", "top1_correct", "top3_correct", "failed")
TABLE_COLUMNS = ("judge", "attribute", "n_authors", "n_failed", "top1", "top1_low", "top1_high", "top3", "top3_low",
                 "top3_high", "majority_top1", "majority_top3", "random_top1", "random_top1_low", "random_top1_high",
                 "random_top3", "random_top3_low", "random_top3_high", "age_tolerance")


def wilson_interval(successes, n, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval of ``successes`` out of ``n`` (arrays or numbers).

    >>> [round(float(v), 4) for v in wilson_interval(8, 10)]
    [0.4902, 0.9433]
    """
    low, high = proportion_confint(successes, n, alpha=alpha, method="wilson")
    return np.asarray(low, dtype=float), np.asarray(high, dtype=float)


def scored_guesses(guesses: pd.DataFrame, agents: pd.DataFrame, *,
                   age_tolerance: int = AGE_TOLERANCE_YEARS) -> pd.DataFrame:
    """One row per judge, author and attribute with a true value: truth, top-1 / top-3 correct, failed."""
    require_columns(guesses, ("judge", "author", "attribute", "rank", "guess"), "attribute guesses")
    require_columns(agents, ("persona_id",), "agents")
    personas = agents.drop_duplicates("persona_id").set_index("persona_id")
    rows = []
    for (judge, author, name), group in guesses.groupby(["judge", "author", "attribute"], sort=True):
        if author not in personas.index:
            continue
        attribute = get_attribute(str(name))
        truth = true_label(attribute, personas.loc[author].to_dict())
        if truth is None:
            continue
        ranked = group[group["rank"] > 0].sort_values("rank")["guess"].astype(str).tolist()[:TOP]
        hits = [age_correct(g, truth, age_tolerance) if attribute.kind == "age" else g == truth for g in ranked]
        rows.append((judge, author, name, truth, bool(hits[:1] and hits[0]), any(hits), not ranked))
    return pd.DataFrame(rows, columns=list(SCORED_COLUMNS))


def best_window_coverage(ages: np.ndarray, k: int, tolerance: int) -> int:
    """The most ages ``k`` windows ``[c - tolerance, c + tolerance]`` can hold together (exact).

    Some best set of windows has every window start at a true age (shift each right until it does), so
    a dynamic programme over the sorted distinct ages finds it: ``best_j(i)`` is the most ages from the
    ``i``-th distinct age on that ``j`` windows hold, ``max(best_j(i + 1), n(i) + best_{j-1}(r(i)))`` with
    ``n(i)`` the ages in the window starting at age ``i`` and ``r(i)`` the first distinct age past it.

    >>> best_window_coverage(np.array([20, 22, 24, 40, 41, 70]), 1, 2), best_window_coverage(np.array([20, 26]), 2, 2)
    (3, 2)
    """
    values, counts = np.unique(ages, return_counts=True)
    cumulative = np.concatenate([[0], np.cumsum(counts)])
    reach = np.searchsorted(values, values + 2 * tolerance, side="right")
    best = np.zeros(len(values) + 1, dtype=np.int64)
    for _ in range(k):
        next_best = np.zeros_like(best)
        for i in range(len(values) - 1, -1, -1):
            next_best[i] = max(next_best[i + 1], cumulative[reach[i]] - cumulative[i] + best[reach[i]])
        best = next_best
    return int(best[0])


def majority_baseline(truths: list[str], kind: str, tolerance: int = AGE_TOLERANCE_YEARS) -> tuple[float, float]:
    """Top-1 and top-3 accuracy of the best constant guesses in hindsight (see the module docstring).

    >>> majority_baseline(["20", "22", "60"], "age", tolerance=1)
    (0.6666666666666666, 1.0)
    """
    if not truths:
        return float("nan"), float("nan")
    if kind != "age":
        counts = pd.Series(truths).value_counts().to_numpy()
        return float(counts[0] / len(truths)), float(counts[:TOP].sum() / len(truths))
    ages = np.array([int(t) for t in truths])
    return (best_window_coverage(ages, 1, tolerance) / len(truths),
            best_window_coverage(ages, TOP, tolerance) / len(truths))


def random_hit_probabilities(truths: list[str], kind: str, n_labels: int,
                             tolerance: int = AGE_TOLERANCE_YEARS) -> tuple[np.ndarray, np.ndarray]:
    """Each author's probability that a uniform random guesser is right at top-1 and at top-3."""
    if kind != "age":
        p1, p3 = 1 / n_labels, min(TOP, n_labels) / n_labels
        return np.full(len(truths), p1), np.full(len(truths), p3)
    ages = np.arange(AGE_RANGE[0], AGE_RANGE[1] + 1)
    m_total = len(ages)
    within = np.array([int(np.sum(np.abs(ages - int(t)) <= tolerance)) for t in truths])
    top3 = 1 - np.array([comb(m_total - m, TOP) for m in within]) / comb(m_total, TOP)
    return within / m_total, top3


def _random_range(p: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    accuracy = (rng.random((RANDOM_DRAWS, len(p))) < p).mean(axis=1)
    low, high = np.quantile(accuracy, [0.025, 0.975])
    return float(low), float(high)


def attribute_inference_table(guesses: pd.DataFrame, agents: pd.DataFrame, *, age_tolerance: int = AGE_TOLERANCE_YEARS,
                              seed: int = 0) -> pd.DataFrame:
    """One row per judge and attribute (:data:`TABLE_COLUMNS`): accuracy, intervals and both baselines."""
    scored = scored_guesses(guesses, agents, age_tolerance=age_tolerance)
    rows = []
    for (judge, name), group in scored.groupby(["judge", "attribute"], sort=True):
        attribute = get_attribute(str(name))
        n = len(group)
        hits1, hits3 = int(group["top1_correct"].sum()), int(group["top3_correct"].sum())
        (low1, low3), (high1, high3) = wilson_interval(np.array([hits1, hits3]), n)
        truths = group["truth"].tolist()
        p1, p3 = random_hit_probabilities(truths, attribute.kind, len(attribute.labels), age_tolerance)
        rng = np.random.default_rng(seed)
        rows.append((judge, name, n, int(group["failed"].sum()), hits1 / n, float(low1), float(high1), hits3 / n,
                     float(low3), float(high3), *majority_baseline(truths, attribute.kind, age_tolerance),
                     float(p1.mean()), *_random_range(p1, rng), float(p3.mean()), *_random_range(p3, rng),
                     age_tolerance if attribute.kind == "age" else None))
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
