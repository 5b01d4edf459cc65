"""The percentile bootstrap over matched sets that every audit interval uses.

Examples
--------
>>> boot = bootstrap_means(np.array([[0.0], [1.0]]), 200, 1)
>>> boot.shape, [float(v) for v in percentile_interval(boot[:, 0], 0.05)]
((200, 1), [0.0, 1.0])
"""
from __future__ import annotations

import numpy as np


def bootstrap_means(values: np.ndarray, draws: int, seed: int) -> np.ndarray:
    """(draws, m) means of the columns of (S, m) ``values`` over sets resampled with replacement.

    Parameters
    ----------
    values : numpy.ndarray
        (S, m) per-set values.
    draws : int
        Bootstrap draws.
    seed : int
        Seed of a fresh ``default_rng``; one index matrix ``integers(0, S, size=(draws, S))``.

    Returns
    -------
    numpy.ndarray

    Notes
    -----
    Draw ``b`` is ``(1/S) sum_s c_bs v_s`` with ``c_bs`` the times set ``s`` was drawn.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993.

    Examples
    --------
    >>> float(bootstrap_means(np.array([[2.0], [2.0]]), 5, 0).max())
    2.0
    """
    n = values.shape[0]
    index = np.random.default_rng(seed).integers(0, n, size=(draws, n))
    counts = np.bincount((index + (np.arange(draws) * n)[:, None]).ravel(), minlength=draws * n).reshape(draws, n)
    return counts.astype(float) @ values / n


def percentile_interval(draws: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``alpha / 2`` and ``1 - alpha / 2`` quantiles of bootstrap draws (along the first axis).

    Parameters
    ----------
    draws : numpy.ndarray
        (draws, ...) bootstrap values.
    alpha : float
        One minus the level.

    Returns
    -------
    tuple of numpy.ndarray

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993, chapter 13.

    Examples
    --------
    >>> [float(v) for v in percentile_interval(np.arange(101.0), 0.1)]
    [5.0, 95.0]
    """
    low, high = np.quantile(draws, [alpha / 2, 1 - alpha / 2], axis=0)
    return low, high
