"""Decisions layered on the paired contrasts: consistency criterion, multiplicity, mixed model, parse failures.

Examples
--------
>>> import pandas as pd
>>> frame = pd.DataFrame({"contrast": ["c"] * 4, "metric": ["y"] * 4,
...                       "stratum_type": ["overall", "model", "model", "topic"],
...                       "stratum": ["all", "a", "b", "t"], "mean_difference": [0.2, 0.1, -0.1, 0.3]})
>>> verdict = consistency_check(frame, "c", "y", min_model_share=0.5, min_topic_share=1.0)
>>> verdict.passed, verdict.models_positive, verdict.n_models
(True, 1, 2)
>>> [float(round(q, 3)) for q in benjamini_hochberg([0.01, 0.04, 0.03, 0.2])]
[0.04, 0.053, 0.053, 0.2]
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests
from statsmodels.tools.sm_exceptions import ConvergenceWarning

from pvsst.core.errors import InputError


@dataclass(frozen=True)
class ConsistencyVerdict:
    """The preregistered consistency criterion for one contrast on one metric."""

    contrast: str
    metric: str
    overall_mean: float
    models_positive: int
    n_models: int
    topics_positive: int
    n_topics: int
    min_model_share: float
    min_topic_share: float

    @property
    def passed(self) -> bool:
        return bool(self.overall_mean > 0
                    and self.models_positive >= math.ceil(self.min_model_share * self.n_models - 1e-9)
                    and self.topics_positive >= math.ceil(self.min_topic_share * self.n_topics - 1e-9))


def consistency_check(results: pd.DataFrame, contrast: str, metric: str, *, min_model_share: float = 0.75,
                      min_topic_share: float = 2 / 3, model_stratum: str = "model",
                      topic_stratum: str = "topic") -> ConsistencyVerdict:
    """The preregistered consistency criterion for one contrast on one metric.

    Parameters
    ----------
    results : pandas.DataFrame
        A table with the published columns (e.g. ``PairedContrastAnalysis.frame``).
    contrast, metric : str
        The row to judge.
    min_model_share, min_topic_share : float
        The shares of model and topic strata that must be positive.
    model_stratum, topic_stratum : str
        The ``stratum_type`` labels of the two kinds of strata.

    Returns
    -------
    ConsistencyVerdict
        The counts and ``passed``.

    Raises
    ------
    InputError
        No overall row for the contrast and metric.

    Notes
    -----
    ``passed`` when the overall mean difference is > 0, at least ``ceil(min_model_share * n_models)``
    model strata have a positive mean and at least ``ceil(min_topic_share * n_topics)`` topic strata do
    (PV-SST: 3 of 4 model families and 2/3 of topics).

    References
    ----------
    .. [1] Usman and Williamson, "Peer-Voted LLM-Agent Stress Tests" (PV-SST), arXiv 2608.20438 (its
       confirmatory preregistration).

    Examples
    --------
    >>> frame = pd.DataFrame({"contrast": "c", "metric": "y", "stratum_type": ["overall", "model", "model", "topic"],
    ...                       "stratum": ["all", "a", "b", "t"], "mean_difference": [0.2, 0.1, -0.1, 0.3]})
    >>> verdict = consistency_check(frame, "c", "y", min_model_share=0.5, min_topic_share=1.0)
    >>> verdict.passed, verdict.models_positive, verdict.n_models
    (True, 1, 2)
    """
    rows = results[(results["contrast"] == contrast) & (results["metric"] == metric)]
    overall = rows.loc[rows["stratum_type"] == "overall", "mean_difference"]
    if overall.empty:
        raise InputError("results", f"{contrast}/{metric}", "no overall row")
    models = rows.loc[rows["stratum_type"] == model_stratum, "mean_difference"]
    topics = rows.loc[rows["stratum_type"] == topic_stratum, "mean_difference"]
    return ConsistencyVerdict(contrast, metric, float(overall.iloc[0]), int((models > 0).sum()),
                              len(models), int((topics > 0).sum()), len(topics), min_model_share,
                              min_topic_share)


def benjamini_hochberg(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values) across one family (statsmodels ``fdr_bh``).

    Parameters
    ----------
    p_values : sequence of float
        The family's p-values.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, in the input order.

    Notes
    -----
    With ``p_(1) <= ... <= p_(m)``, ``q_(i) = min_{j >= i} min(1, m p_(j) / j)``; rejecting ``q < alpha``
    controls the false discovery rate at ``alpha`` for independent or positively dependent tests.

    References
    ----------
    .. [1] Y. Benjamini and Y. Hochberg, "Controlling the false discovery rate: a practical and powerful
       approach to multiple testing", Journal of the Royal Statistical Society B 57(1), 289-300, 1995.

    Examples
    --------
    >>> [float(round(q, 3)) for q in benjamini_hochberg([0.01, 0.04, 0.03, 0.2])]
    [0.04, 0.053, 0.053, 0.2]
    """
    return adjusted_p_values(p_values, "fdr_bh")


def adjusted_p_values(p_values: Sequence[float], method: str) -> np.ndarray:
    """p-values adjusted across one family by a plan's ``multiplicity`` rule.

    Parameters
    ----------
    p_values : sequence of float
        The family's p-values.
    method : str
        ``fdr_bh``, ``fdr_by``, ``holm``, ``bonferroni`` (statsmodels ``multipletests``) or ``none``.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, in the input order (unchanged for ``none`` or an empty family).

    Notes
    -----
    Bonferroni ``min(1, m p)``; Holm's step-down ``max_{j <= i} min(1, (m - j + 1) p_(j))``;
    Benjamini-Hochberg ``min_{j >= i} m p_(j) / j``; Benjamini-Yekutieli the same times
    ``sum_{k=1..m} 1/k``.

    References
    ----------
    .. [1] S. Holm, "A simple sequentially rejective multiple test procedure", Scandinavian Journal of
       Statistics 6(2), 65-70, 1979.
    .. [2] Y. Benjamini and Y. Hochberg, "Controlling the false discovery rate: a practical and powerful
       approach to multiple testing", Journal of the Royal Statistical Society B 57(1), 289-300, 1995.
    .. [3] Y. Benjamini and D. Yekutieli, "The control of the false discovery rate in multiple testing
       under dependency", Annals of Statistics 29(4), 1165-1188, 2001.

    Examples
    --------
    >>> adjusted_p_values([0.01, 0.04], "bonferroni").tolist(), adjusted_p_values([0.01, 0.04], "none").tolist()
    ([0.02, 0.08], [0.01, 0.04])
    """
    p = np.asarray(p_values, dtype=float)
    if p.size == 0 or method == "none":
        return p
    return multipletests(p, method=method)[1]


PARSE_RATE_COLUMNS = ("parse_error_rate", "vote_parse_error_rate")


def parse_failure_table(outcomes: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Per arm: mean and max post / vote parse-failure rate, trials above ``threshold``, and the threshold.

    Parameters
    ----------
    outcomes : pandas.DataFrame
        One row per trial: ``condition`` and ``parse_error_rate`` and/or ``vote_parse_error_rate``.
    threshold : float
        The plan's ``parse_failure_threshold``.

    Returns
    -------
    pandas.DataFrame
        ``condition``, ``<rate>_mean``, ``<rate>_max``, ``<rate>_trials_above``, ``threshold``; no rows
        when the outcomes record no parse-failure rate.

    Notes
    -----
    Per arm and rate: ``mean = (1/n) sum_t rate_t``, ``max = max_t rate_t`` and
    ``trials_above = #{t : rate_t > threshold}``.

    References
    ----------
    .. [1] Usman and Williamson, "Peer-Voted LLM-Agent Stress Tests" (PV-SST), arXiv 2608.20438 (the
       parse-failure rates of its per-trial table).

    Examples
    --------
    >>> outcomes = pd.DataFrame({"condition": ["a", "a", "b"], "parse_error_rate": [0.0, 0.1, 0.02]})
    >>> parse_failure_table(outcomes, 0.05)[["condition", "parse_error_rate_trials_above", "threshold"]].values.tolist()
    [['a', 1, 0.05], ['b', 0, 0.05]]
    """
    columns = [c for c in PARSE_RATE_COLUMNS if c in outcomes.columns]
    if not columns or "condition" not in outcomes.columns:
        return pd.DataFrame(columns=["condition", "threshold"])
    numeric = outcomes[["condition", *columns]].copy()
    numeric[columns] = numeric[columns].apply(pd.to_numeric, errors="coerce")
    grouped = numeric.groupby("condition", sort=False)[columns]
    table = grouped.agg(["mean", "max"])
    table.columns = [f"{c}_{stat}" for c, stat in table.columns]
    above = grouped.agg(lambda rates: int((rates > threshold).sum()))
    above.columns = [f"{c}_trials_above" for c in above.columns]
    return table.join(above).assign(threshold=threshold).reset_index()


@dataclass(frozen=True)
class MixedModelEffect:
    """Fixed effect of treatment vs baseline with random block intercepts (robustness check)."""

    contrast: str
    metric: str
    coefficient: float
    ci_low: float
    ci_high: float
    p_value: float
    n_blocks: int
    n_trials: int


def mixed_model_contrast(table: pd.DataFrame, treatment: str, baseline: str, metric: str, *,
                         block: Sequence[str] = ("model", "topic_id", "seed"), condition: str = "condition",
                         contrast: str | None = None, alpha: float = 0.05) -> MixedModelEffect:
    """``metric ~ is_treatment`` with a random intercept per block (statsmodels ``mixedlm``, REML).

    Only trials of the two arms enter; the coefficient estimates the same mean paired difference the
    block statistics test, under a normal model, as a robustness check.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per trial with the ``block`` columns, ``condition`` and ``metric``.
    treatment, baseline : str
        The two arms.
    metric : str
        The outcome column.
    block : sequence of str
        The block factors.
    condition : str
        The arm column.
    contrast : str, optional
        The contrast's name (default ``<treatment>_minus_<baseline>``).
    alpha : float
        The coefficient's interval covers ``1 - alpha``.

    Returns
    -------
    MixedModelEffect
        Coefficient, its ``1 - alpha`` Wald interval and p, and the numbers of blocks and trials.

    Raises
    ------
    InputError
        Fewer than two blocks or a missing arm.

    Notes
    -----
    ``y_bt = b0 + b1 1[t is treatment] + u_b + e_bt`` with ``u_b ~ N(0, tau^2)`` and
    ``e_bt ~ N(0, sigma^2)``, fitted by REML; with every block complete and balanced, ``b1`` equals the
    mean paired difference.

    References
    ----------
    .. [1] N. M. Laird and J. H. Ware, "Random-effects models for longitudinal data", Biometrics 38(4),
       963-974, 1982.

    Examples
    --------
    >>> table = pd.DataFrame({"model": "m", "topic_id": "t", "seed": [1, 1, 2, 2, 3, 3, 4, 4],
    ...                       "condition": ["likes", "control"] * 4, "y": [1.5, 1.0, 2.7, 2.0, 3.4, 3.0, 4.6, 4.0]})
    >>> effect = mixed_model_contrast(table, "likes", "control", "y")  # paired differences 0.5, 0.7, 0.4, 0.6
    >>> round(effect.coefficient, 6), effect.ci_low < 0.55 < effect.ci_high, (effect.n_blocks, effect.n_trials)
    (0.55, True, (4, 8))
    """
    import statsmodels.formula.api as smf  # lazy: slow to import (~1 s); only the mixed model needs it

    rows = table[table[condition].isin([treatment, baseline])].copy()
    rows["_y"] = pd.to_numeric(rows[metric].astype(float), errors="coerce")
    rows = rows.dropna(subset=["_y"])
    rows["_treated"] = (rows[condition] == treatment).astype(float)
    rows["_block"] = rows[list(block)].astype(str).agg("|".join, axis=1)
    if rows["_block"].nunique() < 2 or rows["_treated"].nunique() < 2:
        raise InputError("table", metric, "mixed model needs both arms in at least two blocks")
    with warnings.catch_warnings():
        # A block variance estimated at its boundary (0) is a valid fit for this check.
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = smf.mixedlm("_y ~ _treated", rows, groups=rows["_block"]).fit(reml=True)
    low, high = fit.conf_int(alpha=alpha).loc["_treated"]
    return MixedModelEffect(contrast or f"{treatment}_minus_{baseline}", metric,
                            float(fit.params["_treated"]), float(low), float(high),
                            float(fit.pvalues["_treated"]), int(rows["_block"].nunique()), len(rows))
