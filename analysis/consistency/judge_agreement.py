"""Agreement of two stance judges on the same posts: raw agreement and Cohen's weighted kappa.

Judged stances are scores on the seven-level scale -3..3. For two judges' scores on the same n posts
with the 7 x 7 confusion matrix ``O`` (proportions), its chance expectation ``E = outer(row sums,
column sums)`` and disagreement weights ``w_ij = |i - j|`` (linear) or ``(i - j)^2`` (quadratic),

.. math::

    \\kappa_w = 1 - \\frac{\\sum_{ij} w_{ij} O_{ij}}{\\sum_{ij} w_{ij} E_{ij}}

(Cohen 1968, "Weighted kappa", Psychological Bulletin 70(4), 213-220); raw agreement is
``trace(O)`` and side agreement the share of posts both judges put on the same side (support,
neutral, oppose). A stance measure is only as good as its judge: PV-SST reports that LLM judges agreed
on 43.6% of posts (kappa 0.258), so a judged-stance consistency number is read beside the agreement
of two judges on the same run. Kappa itself is computed by scikit-learn's ``cohen_kappa_score``.

Examples
--------
>>> result = judge_agreement([3, 2, 1, 0, -1, -2], [3, 2, 0, 0, -1, -3])
>>> result.n, round(result.raw_agreement, 4), round(result.kappa_linear, 4), round(result.kappa_quadratic, 4)
(6, 0.6667, 0.8421, 0.9512)
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from pvsst.analysis.stats.paired import require_columns
from pvsst.core.errors import InputError

STANCE_SCALE = (3, 2, 1, 0, -1, -2, -3)
"""The seven stance scores, strongly support first (the order of the confusion matrix)."""
POST_KEY = ("trial_id", "round", "agent_id")


@dataclass(frozen=True)
class JudgeAgreement:
    """Agreement of two judges on ``n`` posts; ``confusion`` has rows = first judge, columns = second,
    both in :data:`STANCE_SCALE` order (counts)."""

    n: int
    raw_agreement: float
    side_agreement: float
    kappa_linear: float
    kappa_quadratic: float
    confusion: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        """One row: n, raw_agreement, side_agreement, kappa_linear, kappa_quadratic."""
        return pd.DataFrame([{"n": self.n, "raw_agreement": self.raw_agreement,
                              "side_agreement": self.side_agreement, "kappa_linear": self.kappa_linear,
                              "kappa_quadratic": self.kappa_quadratic}])


def judge_agreement(first: Sequence[int], second: Sequence[int]) -> JudgeAgreement:
    """Raw agreement, side agreement and linear / quadratic weighted kappa of two judges' stance scores.

    Parameters
    ----------
    first, second : sequence of int
        Judged stances (-3..3) of the same posts, in the same order.

    Returns
    -------
    JudgeAgreement
        ``n``, ``raw_agreement``, ``side_agreement``, ``kappa_linear``, ``kappa_quadratic`` and the 7 x 7
        ``confusion`` counts. Kappa is NaN when both judges give one and the same score to every post (no
        chance-expected disagreement to compare with).

    Raises
    ------
    InputError
        Lists of different lengths, no post, or a score outside -3..3.

    Notes
    -----
    With ``O`` the confusion matrix as proportions, ``E`` the outer product of its row and column sums and
    disagreement weights ``w_ij = |i - j|`` (linear) or ``(i - j)^2`` (quadratic),
    ``kappa_w = 1 - sum_ij w_ij O_ij / sum_ij w_ij E_ij`` (scikit-learn's ``cohen_kappa_score``); raw
    agreement is ``trace(O)`` and side agreement the share of posts with ``sign(a) == sign(b)``.

    References
    ----------
    .. [1] J. Cohen, "Weighted kappa: nominal scale agreement with provision for scaled disagreement or
       partial credit", Psychological Bulletin 70(4), 213-220, 1968.

    Examples
    --------
    >>> result = judge_agreement([3, 2, 1, 0, -1, -2], [3, 2, 0, 0, -1, -3])
    >>> result.n, round(result.raw_agreement, 4), round(result.kappa_linear, 4), round(result.kappa_quadratic, 4)
    (6, 0.6667, 0.8421, 0.9512)
    >>> judge_agreement([1, -1, 1, -1], [1, -1, -1, 1]).kappa_linear
    0.0
    """
    a, b = np.asarray(first, dtype=int), np.asarray(second, dtype=int)
    if a.shape != b.shape or a.ndim != 1:
        raise InputError("judge agreement", "scores", f"two equally long lists needed, got {a.shape} and {b.shape}")
    if a.size == 0:
        raise InputError("judge agreement", "scores", "no post judged by both judges")
    outside = sorted(set(np.concatenate([a, b]).tolist()) - set(STANCE_SCALE))
    if outside:
        raise InputError("judge agreement", "scores", f"not a stance score: {outside[0]}")
    labels = list(STANCE_SCALE)
    return JudgeAgreement(
        n=int(a.size), raw_agreement=float(np.mean(a == b)), side_agreement=float(np.mean(np.sign(a) == np.sign(b))),
        kappa_linear=_kappa(a, b, labels, "linear"), kappa_quadratic=_kappa(a, b, labels, "quadratic"),
        confusion=confusion_matrix(a, b, labels=labels))


def compare_judges(first: pd.DataFrame, second: pd.DataFrame) -> JudgeAgreement:
    """:func:`judge_agreement` of two judged-stance tables, matched on ``trial_id, round, agent_id``.

    Posts judged by only one of them, or whose judge call failed (an empty ``judged_stance``), are left out.

    Parameters
    ----------
    first, second : pandas.DataFrame
        The post key and ``judged_stance`` (the judged-stance table of ``pvsst.sim.judges.stance_judge``).

    Returns
    -------
    JudgeAgreement

    Notes
    -----
    The measures of :func:`judge_agreement` over the posts both judges read:
    ``kappa_w = 1 - sum_ij w_ij O_ij / sum_ij w_ij E_ij``.

    References
    ----------
    .. [1] J. Cohen, "Weighted kappa: nominal scale agreement with provision for scaled disagreement or
       partial credit", Psychological Bulletin 70(4), 213-220, 1968.

    Examples
    --------
    >>> a = pd.DataFrame({"trial_id": "t", "round": 0, "agent_id": ["x", "y"], "judged_stance": [2, -1]})
    >>> compare_judges(a, a.assign(judged_stance=[2, 1])).raw_agreement
    0.5
    """
    for name, table in (("first judge", first), ("second judge", second)):
        require_columns(table, (*POST_KEY, "judged_stance"), name)
    both = first[[*POST_KEY, "judged_stance"]].merge(second[[*POST_KEY, "judged_stance"]], on=list(POST_KEY),
                                                     suffixes=("_first", "_second"), validate="one_to_one")
    both = both.dropna(subset=["judged_stance_first", "judged_stance_second"])
    return judge_agreement(both["judged_stance_first"].to_numpy(), both["judged_stance_second"].to_numpy())


def _kappa(a: np.ndarray, b: np.ndarray, labels: list[int], weights: str) -> float:
    if len(set(a.tolist()) | set(b.tolist())) == 1:
        return float("nan")
    return float(cohen_kappa_score(a, b, labels=labels, weights=weights))
