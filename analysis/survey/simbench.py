"""The SimBench score: how much closer to the human answer distribution a simulator is than uniform guessing.

SimBench (Hu et al. 2025, "SimBench: Benchmarking the Ability of Large Language Models to Simulate
Human Behaviors", arXiv 2510.17516) scores a simulated distribution p against the human distribution h
over the K options of one question by total variation, rescaled by the uniform distribution u:

    TV(p, h) = 1/2 * sum_k |p_k - h_k|
    S(p, h)  = 100 * (1 - TV(p, h) / TV(u, h)),      u_k = 1 / K

S = 100 for a perfect simulator (p = h), S = 0 for one no closer than uniform, S < 0 for one farther
away; it is undefined (NaN) when the humans themselves answer uniformly (TV(u, h) = 0).

Two views, named apart. :func:`simbench_score` is the *per-question* view: each question divided by its
own TV(u, h) (pvsst's ``simbench`` rows and their mean, ``mean_simbench``); a question whose humans are
near uniform makes it unstable. The *published* SimBench score (:func:`published_simbench`; its released
scorer) divides the data set's mean TV(p, h) by its mean TV(u, h) over the questions (rows),

    S_data = 100 * (1 - mean_q TV(p_q, h_q) / mean_q TV(u_q, h_q)),

which is pvsst's ``pooled_simbench``. The mean of per-question scores is not the published score (on a
CCES cell oracle: mean 30.7, published 48.1).

Functions are vectorised over leading axes like those of :mod:`pvsst.analysis.survey.fidelity`; inputs may be counts
(they are normalised over the last axis).

Examples
--------
>>> h = np.array([0.5, 0.3, 0.2])
>>> float(simbench_score(h, h)), float(simbench_score(np.full(3, 1 / 3), h))
(100.0, 0.0)
"""
from __future__ import annotations

import numpy as np


def _normalise(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    total = p.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, p / np.where(total > 0, total, 1.0), np.nan)


def total_variation(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Total variation distance ``1/2 sum_k |p_k - q_k|`` over the last axis (inputs normalised).

    Parameters
    ----------
    p, q : numpy.ndarray
        (..., K) counts or probabilities, normalised over the last axis here (broadcast together).

    Returns
    -------
    numpy.ndarray
        (...) distances in [0, 1].

    Notes
    -----
    ``TV(p, q) = 1/2 sum_k |p_k - q_k| = max_A |p(A) - q(A)|`` over sets of options ``A``.

    References
    ----------
    .. [1] D. A. Levin, Y. Peres and E. L. Wilmer, *Markov Chains and Mixing Times*, section 4.1,
       American Mathematical Society, 2009.

    Examples
    --------
    >>> float(total_variation(np.array([1, 0, 0]), np.array([0, 1, 1])))
    1.0
    >>> total_variation(np.array([[0.5, 0.5], [1.0, 0.0]]), np.array([0.25, 0.75])).tolist()
    [0.25, 0.75]
    """
    return 0.5 * np.abs(_normalise(p) - _normalise(q)).sum(axis=-1)


def simbench_score(model: np.ndarray, human: np.ndarray) -> np.ndarray:
    """The SimBench score of simulated against human answer distributions over the last axis.

    Parameters
    ----------
    model, human : numpy.ndarray
        (..., K) counts or probabilities of one question's K options (normalised here).

    Returns
    -------
    numpy.ndarray
        (...) scores: 100 for a perfect simulator, 0 for one no closer than uniform guessing, negative
        for one farther away; NaN when the humans answer uniformly.

    Notes
    -----
    ``S(p, h) = 100 * (1 - TV(p, h) / TV(u, h))`` with ``u_k = 1 / K`` and ``TV`` of
    :func:`total_variation`; undefined where ``TV(u, h) = 0``.

    References
    ----------
    .. [1] T. Hu et al., "SimBench: Benchmarking the Ability of Large Language Models to Simulate Human
       Behaviors", arXiv 2510.17516, 2025.

    Examples
    --------
    >>> # TV(model, human) = 0.1, TV(uniform, human) = 0.2: halfway from uniform to perfect
    >>> round(float(simbench_score(np.array([0.6, 0.4]), np.array([0.7, 0.3]))), 9)
    50.0
    >>> float(simbench_score(np.array([0.6, 0.4]), np.array([0.5, 0.5])))
    nan
    """
    human = _normalise(human)
    uniform = np.full(human.shape[-1], 1.0 / human.shape[-1])
    scale = total_variation(uniform, human)
    distance = total_variation(model, human)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(scale > 1e-15, 100.0 * (1.0 - distance / np.where(scale > 1e-15, scale, 1.0)), np.nan)


def published_simbench(models, humans) -> float:
    """The published SimBench score of a data set: mean TV over its questions, rescaled by the mean TV of uniform.

    Parameters
    ----------
    models, humans : sequence of numpy.ndarray
        One (K_q,) simulated and one human distribution (counts or probabilities) per question; the
        questions may have different numbers of options.

    Returns
    -------
    float
        ``100 (1 - mean_q TV(p_q, h_q) / mean_q TV(u_q, h_q))``; NaN when every question's humans answer
        uniformly.

    Notes
    -----
    The released SimBench scorer averages the rows' total variations before the ratio; the mean of
    per-question scores (:func:`simbench_score`) weighs a question by ``1 / TV(u_q, h_q)`` instead, so the
    two differ whenever the questions' distances from uniform differ. pvsst's ``pooled_simbench``.

    References
    ----------
    .. [1] T. Hu et al., "SimBench: Benchmarking the Ability of Large Language Models to Simulate Human
       Behaviors", arXiv 2510.17516, 2025.

    Examples
    --------
    >>> humans = [np.array([0.9, 0.1]), np.array([0.55, 0.45])]
    >>> models = [np.array([0.8, 0.2]), np.array([0.5, 0.5])]
    >>> round(published_simbench(models, humans), 6)  # 100 (1 - (0.1 + 0.05) / (0.4 + 0.05))
    66.666667
    >>> round(float(np.mean([simbench_score(m, h) for m, h in zip(models, humans)])), 6)  # (75 + 0) / 2
    37.5
    """
    distance = np.mean([float(total_variation(m, h)) for m, h in zip(models, humans)])
    scale = np.mean([float(total_variation(np.ones(len(h)), h)) for h in humans])
    return float(100.0 * (1.0 - distance / scale)) if scale > 1e-15 else float("nan")
