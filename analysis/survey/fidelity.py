"""Distributional fidelity of simulated survey answers against real answers (PSII, OpinionQA, SubPOP).

Every measure here is a function of answer distributions over the K ordered options of one question,
vectorised over any leading axes (bootstrap draws, groups), so one call scores all draws at once.

- ``kl_divergence(p, q, smoothing)``: KL(p || q) in nats after **additive smoothing** of both
  distributions, ``p' = (p + smoothing) / (1 + K * smoothing)`` (so KL stays finite when an option is
  never chosen; the default smoothing of 1e-3 is stated in every fidelity table).
- ``js_distance(p, q)``: Jensen-Shannon distance, base 2 (in [0, 1]); no smoothing needed.
- ``wasserstein_representativeness(p, q)``: ``1 - W1(p, q) / (K - 1)`` with options at ordinal
  positions 0..K-1 (OpinionQA's representativeness; 1 = identical, 0 = all mass at opposite ends).
- ``normalized_entropy(p)`` = H(p) / log K and ``entropy_deviation(p, q)`` = |H_norm(p) - H_norm(q)|
  (PSII's diversity measure).
- ``eta_squared(table)``: between-group share of variance of the ordinal position, from a
  (group x option) table of (weighted) counts: SS_between / SS_total; 0 when the answers have no
  variance at all (one answer for everyone: no group differs). ``delta eta^2 = eta^2(model) -
  eta^2(human)`` is the between-group inflation: > 0 exaggerates group gaps, < 0 erases them.

Bootstrap: :func:`bootstrap_tables` resamples units (respondents, or personas with all their samples)
with replacement and returns (group x option) count tables for every draw, vectorised with
``np.bincount``; draw 0 is the observed sample. Survey designs (:func:`design_resample`) resample
whole clusters with replacement within each stratum; the resample is then a multiplicity per unit.
Near a boundary (a divergence of about 0) every resample lies on one side of the observed value;
:func:`bounded_interval` then extends the percentile interval to the boundary so it holds the value.

Examples
--------
>>> p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
>>> round(float(js_distance(p, q)), 4), round(float(wasserstein_representativeness(p, q)), 3)
(0.3095, 0.7)
>>> float(eta_squared(np.array([[10, 0, 0], [0, 0, 10]])))
1.0
"""
from __future__ import annotations

import numpy as np

DEFAULT_SMOOTHING = 1e-3


def _normalise(counts: np.ndarray) -> np.ndarray:
    counts = np.asarray(counts, dtype=float)
    total = counts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, counts / np.where(total > 0, total, 1.0), np.nan)


def smooth(p: np.ndarray, smoothing: float = DEFAULT_SMOOTHING) -> np.ndarray:
    """Additive smoothing of distributions over the last axis.

    Parameters
    ----------
    p : numpy.ndarray
        (..., K) distributions (each sums to 1).
    smoothing : float
        The pseudo-probability ``s`` added to every option.

    Returns
    -------
    numpy.ndarray
        (..., K) distributions with no zero entry when ``s > 0``.

    Notes
    -----
    ``p'_k = (p_k + s) / (1 + K s)``, which sums to 1 again.

    References
    ----------
    .. [1] C. D. Manning and H. Schütze, *Foundations of Statistical Natural Language Processing*,
       section 6.2.2 (Lidstone's law), MIT Press, 1999.

    Examples
    --------
    >>> smooth(np.array([1.0, 0.0]), 0.5).tolist()
    [0.75, 0.25]
    """
    p = np.asarray(p, dtype=float)
    return (p + smoothing) / (1.0 + p.shape[-1] * smoothing)


def kl_divergence(p: np.ndarray, q: np.ndarray, smoothing: float = DEFAULT_SMOOTHING) -> np.ndarray:
    """KL(p || q) in nats over the last axis, after additive smoothing of both (see :func:`smooth`).

    Parameters
    ----------
    p, q : numpy.ndarray
        (..., K) distributions (broadcast against each other).
    smoothing : float
        The additive smoothing ``s`` of both, stated in every fidelity table (0 for the plain divergence).

    Returns
    -------
    numpy.ndarray
        (...) divergences, >= 0.

    Notes
    -----
    ``KL(p || q) = sum_k p'_k ln(p'_k / q'_k)`` with ``p' = (p + s) / (1 + K s)`` and ``q'`` likewise, so
    the divergence stays finite when ``q`` never chose an option ``p`` did.

    References
    ----------
    .. [1] S. Kullback and R. A. Leibler, "On information and sufficiency", Annals of Mathematical
       Statistics 22(1), 79-86, 1951.

    Examples
    --------
    >>> p, q = np.array([0.5, 0.5]), np.array([0.25, 0.75])
    >>> round(float(kl_divergence(p, q, smoothing=0.0)), 6), round(float(kl_divergence(p, q)), 6)
    (0.143841, 0.143177)
    """
    ps, qs = smooth(p, smoothing), smooth(q, smoothing)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(ps > 0, ps * np.log(ps / qs), 0.0)
    return np.clip(terms.sum(axis=-1), 0.0, None)  # >= 0; rounding can leave -1e-17 for equal p, q


def js_distance(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jensen-Shannon distance (the square root of the JS divergence), base 2, over the last axis.

    Parameters
    ----------
    p, q : numpy.ndarray
        (..., K) distributions.

    Returns
    -------
    numpy.ndarray
        (...) distances in [0, 1]; no smoothing is needed.

    Notes
    -----
    With ``m = (p + q) / 2``, ``JSD(p, q) = KL(p || m) / 2 + KL(q || m) / 2`` in bits, and the distance is
    ``sqrt(JSD)``, a metric (equal to ``scipy.spatial.distance.jensenshannon(p, q, base=2)``).

    References
    ----------
    .. [1] J. Lin, "Divergence measures based on the Shannon entropy", IEEE Transactions on Information
       Theory 37(1), 145-151, 1991.
    .. [2] D. M. Endres and J. E. Schindelin, "A new metric for probability distributions", IEEE
       Transactions on Information Theory 49(7), 1858-1860, 2003.

    Examples
    --------
    >>> float(js_distance(np.array([1.0, 0.0]), np.array([0.0, 1.0])))
    1.0
    >>> round(float(js_distance(np.array([0.5, 0.5]), np.array([0.25, 0.75]))), 6)
    0.220896
    """
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    m = 0.5 * (p + q)

    def _kl(a: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(a > 0, a * np.log2(a / m), 0.0).sum(axis=-1)

    return np.sqrt(np.clip(0.5 * (_kl(p) + _kl(q)), 0.0, None))


def wasserstein_representativeness(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``1 - W1(p, q) / (K - 1)`` over ordinal positions 0..K-1 (last axis).

    Parameters
    ----------
    p, q : numpy.ndarray
        (..., K) distributions over ordered options.

    Returns
    -------
    numpy.ndarray
        (...) values in [0, 1]: 1 for identical distributions, 0 for all mass at opposite ends.

    Notes
    -----
    W1 between distributions on equally spaced points is the summed absolute difference of the CDFs,
    ``W1 = sum_{k<K-1} |F_p(k) - F_q(k)|``, and ``K - 1`` is its largest value.

    References
    ----------
    .. [1] S. Santurkar, E. Durmus, F. Ladhak, C. Lee, P. Liang and T. Hashimoto, "Whose opinions do
       language models reflect?", Proceedings of the 40th International Conference on Machine Learning
       (ICML), 2023 (OpinionQA's representativeness).

    Examples
    --------
    >>> p, q = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.5, 0.3])
    >>> round(float(wasserstein_representativeness(p, q)), 6)  # W1 = 0.4 + 0.2
    0.7
    """
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    k = p.shape[-1]
    w1 = np.abs(np.cumsum(p - q, axis=-1)[..., :-1]).sum(axis=-1)
    return 1.0 - w1 / (k - 1)


def normalized_entropy(p: np.ndarray) -> np.ndarray:
    """Shannon entropy divided by ln K over the last axis: 1 for uniform answers, 0 for one option.

    Parameters
    ----------
    p : numpy.ndarray
        (..., K) distributions.

    Returns
    -------
    numpy.ndarray
        (...) values in [0, 1].

    Notes
    -----
    ``H_norm(p) = -sum_k p_k ln p_k / ln K`` (terms with ``p_k = 0`` are 0).

    References
    ----------
    .. [1] C. E. Shannon, "A mathematical theory of communication", Bell System Technical Journal 27,
       379-423, 1948.

    Examples
    --------
    >>> normalized_entropy(np.array([[0.5, 0.5], [0.9, 0.1]])).round(6).tolist()
    [1.0, 0.468996]
    """
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.where(p > 0, p * np.log(p), 0.0).sum(axis=-1)
    return h / np.log(p.shape[-1])


def entropy_deviation(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``|H_norm(p) - H_norm(q)|``: how much more or less diverse one answer distribution is than another.

    Parameters
    ----------
    p, q : numpy.ndarray
        (..., K) distributions.

    Returns
    -------
    numpy.ndarray
        (...) values in [0, 1].

    Notes
    -----
    ``|H_norm(p) - H_norm(q)|`` with ``H_norm`` of :func:`normalized_entropy`; a simulator that answers
    more uniformly, or more uniformly wrong, than people shows it even when its mean is right.

    References
    ----------
    .. [1] C. E. Shannon, "A mathematical theory of communication", Bell System Technical Journal 27,
       379-423, 1948.

    Examples
    --------
    >>> round(float(entropy_deviation(np.array([1/3, 1/3, 1/3]), np.array([1.0, 0.0, 0.0]))), 6)
    1.0
    """
    return np.abs(normalized_entropy(p) - normalized_entropy(q))


def eta_squared(table: np.ndarray) -> np.ndarray:
    """Eta squared of the ordinal position (0..K-1) by group, from (..., G, K) count tables.

    Parameters
    ----------
    table : numpy.ndarray
        (..., G, K) (weighted) answer counts per group and option.

    Returns
    -------
    numpy.ndarray
        (...) values in [0, 1]: 0 when every answer sits at one position (no variance, so no gap between
        groups), NaN only for a table without answers.

    Notes
    -----
    With ``x_k = k`` the option positions, ``n_g`` a group's count, ``xbar_g`` its mean position and
    ``xbar`` the grand mean,

        eta^2 = SS_between / SS_total = sum_g n_g (xbar_g - xbar)^2 / sum_{g,k} n_gk (x_k - xbar)^2;

    groups with no answers add nothing. ``eta^2(model) - eta^2(human)`` is the between-group inflation.

    References
    ----------
    .. [1] J. T. E. Richardson, "Eta squared and partial eta squared as measures of effect size in
       educational research", Educational Research Review 6(2), 135-147, 2011.

    Examples
    --------
    >>> # scores 0,0,1 in group a and 1,2,2 in group b: grand mean 1, SS_total 4, SS_between 8/3
    >>> round(float(eta_squared(np.array([[2, 1, 0], [0, 1, 2]]))), 6)
    0.666667
    >>> float(eta_squared(np.array([[3, 0, 0], [5, 0, 0]])))  # one answer for everyone
    0.0
    """
    table = np.asarray(table, dtype=float)
    positions = np.arange(table.shape[-1], dtype=float)
    n_group = table.sum(axis=-1)
    n = n_group.sum(axis=-1)
    sum_group = (table * positions).sum(axis=-1)
    grand = sum_group.sum(axis=-1) / np.where(n > 0, n, 1.0)
    ss_total = (table.sum(axis=-2) * (positions - grand[..., None]) ** 2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_group = np.where(n_group > 0, sum_group / np.where(n_group > 0, n_group, 1.0), 0.0)
        ss_between = (n_group * (mean_group - grand[..., None]) ** 2).sum(axis=-1)
        eta = np.where(ss_total > 0, ss_between / np.where(ss_total > 0, ss_total, 1.0), 0.0)
    return np.where(n > 0, eta, np.nan)


def no_variance(table: np.ndarray) -> np.ndarray:
    """Whether the answers of a (..., G, K) table sit at one option (eta squared is then 0 by definition).

    Parameters
    ----------
    table : numpy.ndarray
        (..., G, K) counts.

    Returns
    -------
    numpy.ndarray
        (...) booleans.

    Examples
    --------
    >>> no_variance(np.array([[3, 0], [5, 0]])).item(), no_variance(np.array([[3, 0], [0, 1]])).item()
    (True, False)
    """
    table = np.asarray(table, dtype=float)
    return (table.sum(axis=-2) > 0).sum(axis=-1) <= 1


def resample_index(n_units: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """(draws + 1, n_units) unit indices: row 0 the observed sample, then resamples with replacement.

    Parameters
    ----------
    n_units : int
        Number of resampling units.
    draws : int
        Number of resamples.
    rng : numpy.random.Generator
        The generator that draws them.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> index = resample_index(3, 2, np.random.default_rng(0))
    >>> index.shape, index[0].tolist()
    ((3, 3), [0, 1, 2])
    """
    observed = np.arange(n_units)[None, :]
    return np.vstack([observed, rng.integers(0, max(n_units, 1), size=(draws, n_units))])


class Multiplicity(np.ndarray):
    """(draws + 1, n_units) times each unit is in each resample (row 0: all ones), the form a design
    resample takes (its size varies with the clusters drawn); see :func:`design_resample`."""


def design_resample(strata: np.ndarray | None, clusters: np.ndarray | None, draws: int,
                    rng: np.random.Generator) -> Multiplicity:
    """Resample a survey design: in every stratum, as many clusters as it has, drawn with replacement.

    A unit's multiplicity in a draw is the number of times its cluster was drawn, so a resample keeps
    whole clusters and every stratum's number of clusters (the naive cluster bootstrap within strata).
    A stratum with a single cluster adds no variance.

    Parameters
    ----------
    strata, clusters : numpy.ndarray or None
        Each unit's stratum and cluster labels (``None``: one stratum / every unit its own cluster).
    draws : int
        Number of resamples.
    rng : numpy.random.Generator
        The generator that draws them.

    Returns
    -------
    Multiplicity
        (draws + 1, n_units) multiplicities, row 0 all ones (the observed sample).

    Examples
    --------
    >>> m = design_resample(np.array([0, 0, 0, 1, 1]), np.array([0, 0, 1, 2, 3]), 3, np.random.default_rng(0))
    >>> m.shape, m[0].tolist()
    ((4, 5), [1.0, 1.0, 1.0, 1.0, 1.0])
    >>> bool((m[1:, 0] == m[1:, 1]).all()), m[1:, 3:].sum(axis=1).tolist()  # clusters kept; 2 per stratum
    (True, [2.0, 2.0, 2.0])
    """
    n = len(strata if strata is not None else clusters)
    strata = np.zeros(n, np.int64) if strata is None else np.unique(np.asarray(strata), return_inverse=True)[1]
    clusters = np.arange(n) if clusters is None else np.asarray(clusters)
    out = np.ones((draws + 1, n))
    for stratum in range(int(strata.max()) + 1 if n else 0):
        members = np.flatnonzero(strata == stratum)
        labels, cluster = np.unique(clusters[members], return_inverse=True)
        c = len(labels)
        drawn = rng.integers(0, c, size=(draws, c))
        times = np.bincount((np.arange(draws)[:, None] * c + drawn).ravel(), minlength=draws * c).reshape(draws, c)
        out[1:, members] = times[:, cluster]
    return out.view(Multiplicity)


def bootstrap_tables(unit_counts: np.ndarray, groups: np.ndarray, n_groups: int,
                     index: np.ndarray) -> np.ndarray:
    """(draws + 1, n_groups, K) count tables of the resamples given by ``index`` (see :func:`resample_index`).

    Parameters
    ----------
    unit_counts : numpy.ndarray
        (n_units, K) weighted answer counts per resampling unit (a respondent: its weight on its answer;
        a persona: all its samples, so personas are resampled as clusters).
    groups : numpy.ndarray
        (n_units,) group index per unit in ``0..n_groups-1``; ``-1`` for a unit without a group (it is
        resampled but counted in no group table).
    n_groups : int
        Number of groups.
    index : numpy.ndarray or Multiplicity
        (draws + 1, n_units) unit indices, one resample per row, or a design resample.

    Returns
    -------
    numpy.ndarray
        Row 0 holds the observed tables.

    Examples
    --------
    >>> counts = np.eye(3)[[0, 1, 2, 2]]
    >>> index = resample_index(4, 5, np.random.default_rng(0))
    >>> tables = bootstrap_tables(counts, np.array([0, 0, 1, 1]), 2, index)
    >>> tables.shape, tables[0].tolist(), bool((tables.sum(axis=(1, 2)) == 4).all())
    ((6, 2, 3), [[1.0, 1.0, 0.0], [0.0, 0.0, 2.0]], True)
    """
    unit_counts = np.asarray(unit_counts, dtype=float)
    k = unit_counts.shape[1]
    rows = index.shape[0]
    groups = np.asarray(groups, dtype=np.int64)
    if isinstance(index, Multiplicity):
        member = np.zeros((len(groups), n_groups))
        member[np.flatnonzero(groups >= 0), groups[groups >= 0]] = 1.0
        per_unit = (member[:, :, None] * unit_counts[:, None, :]).reshape(len(groups), n_groups * k)
        return (np.asarray(index) @ per_unit).reshape(rows, n_groups, k)
    # An extra slot collects units without a group, then is dropped.
    slot = np.where(groups < 0, n_groups, groups)
    width = n_groups + 1
    if ((unit_counts != 0).sum(axis=1) <= 1).all():
        # One answer per unit (a respondent): one pass, the option folded into the bin.
        mass = unit_counts.sum(axis=1)
        cell = slot * k + unit_counts.argmax(axis=1)
        # Unit masses (an unweighted survey): a sum of ones is exact, so counting gives the weighted sum's
        # floats without gathering the masses; a unit without an answer goes to the dropped slot.
        weights = None if ((mass == 0) | (mass == 1)).all() else mass[index].ravel()
        if weights is None:
            cell = np.where(mass > 0, cell, n_groups * k)
        flat = cell[index]
        flat += (np.arange(rows) * (width * k))[:, None]
        out = np.bincount(flat.ravel(), weights=weights, minlength=rows * width * k).astype(float, copy=False)
        return out.reshape(rows, width, k)[:, :n_groups, :]
    flat = (np.arange(rows)[:, None] * width + slot[index]).ravel()
    out = np.empty((rows, width, k))
    for option in range(k):
        out[:, :, option] = np.bincount(flat, weights=unit_counts[index, option].ravel(),
                                        minlength=rows * width).reshape(rows, width)
    return out[:, :n_groups, :]


def distribution_metrics(human: np.ndarray, model: np.ndarray, *, ordinal: bool = True,
                         smoothing: float = DEFAULT_SMOOTHING) -> dict[str, np.ndarray]:
    """Every per-distribution measure of ``model`` against ``human`` ((..., K) count or probability arrays).

    Parameters
    ----------
    human, model : numpy.ndarray
        (..., K) counts or probabilities (normalised over the last axis here).
    ordinal : bool
        Whether the options are ordered (adds ``representativeness_w1``).
    smoothing : float
        The additive smoothing of both KL divergences.

    Returns
    -------
    dict of str to numpy.ndarray
        ``kl_human_model``, ``kl_model_human``, ``js_distance``, ``representativeness_w1`` (ordinal
        only), ``entropy_norm_human``, ``entropy_norm_model``, ``entropy_deviation``.

    Notes
    -----
    With ``h`` and ``m`` the normalised distributions: ``KL(h' || m')`` and ``KL(m' || h')`` after
    additive smoothing (:func:`kl_divergence`), ``sqrt(JSD(h, m))`` base 2 (:func:`js_distance`),
    ``1 - W1(h, m) / (K - 1)`` (:func:`wasserstein_representativeness`), ``H(.) / ln K``
    (:func:`normalized_entropy`) and their absolute difference.

    References
    ----------
    .. [1] S. Kullback and R. A. Leibler, "On information and sufficiency", Annals of Mathematical
       Statistics 22(1), 79-86, 1951.
    .. [2] J. Lin, "Divergence measures based on the Shannon entropy", IEEE Transactions on Information
       Theory 37(1), 145-151, 1991.
    .. [3] S. Santurkar et al., "Whose opinions do language models reflect?", ICML 2023.

    Examples
    --------
    >>> m = distribution_metrics(np.array([30, 50, 20]), np.array([1, 1, 1]))
    >>> round(float(m["entropy_deviation"]), 4), round(float(m["js_distance"]), 4)
    (0.0628, 0.1578)
    """
    h, m = _normalise(human), _normalise(model)
    out = {
        "kl_human_model": kl_divergence(h, m, smoothing),
        "kl_model_human": kl_divergence(m, h, smoothing),
        "js_distance": js_distance(h, m),
    }
    if ordinal:
        out["representativeness_w1"] = wasserstein_representativeness(h, m)
    out["entropy_norm_human"] = normalized_entropy(h)
    out["entropy_norm_model"] = normalized_entropy(m)
    out["entropy_deviation"] = np.abs(out["entropy_norm_model"] - out["entropy_norm_human"])
    return out


def bounded_interval(value: float, low: float, high: float, bounds: tuple[float | None, float | None] = (None, None)
                     ) -> tuple[float, float]:
    """A percentile interval made to hold the observed ``value``.

    Where the value lies outside it (a divergence near 0, whose every resample is farther away), the
    interval is extended to the metric's bound on that side.

    Parameters
    ----------
    value, low, high : float
        The observed value and the percentile interval.
    bounds : tuple of (float or None, float or None)
        The metric's lower and upper bounds; ``None`` extends to the value itself.

    Returns
    -------
    tuple of float
        ``(low, high)``; unchanged when any input is not finite.

    Examples
    --------
    >>> bounded_interval(7e-9, 0.0013, 0.008, (0.0, None))
    (0.0, 0.008)
    >>> bounded_interval(0.4, 0.1, 0.3)
    (0.1, 0.4)
    """
    if not np.isfinite(value) or not (np.isfinite(low) and np.isfinite(high)):
        return low, high
    if value < low:
        low = bounds[0] if bounds[0] is not None else value
    if value > high:
        high = bounds[1] if bounds[1] is not None else value
    return float(low), float(high)


def percentile_interval(draws: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the finite ``draws`` (NaN, NaN when there are none).

    Parameters
    ----------
    draws : numpy.ndarray
        Bootstrap replicates of a statistic (non-finite ones are left out).
    level : float
        The coverage, e.g. 0.95.

    Returns
    -------
    tuple of float
        ``(low, high)``.

    Notes
    -----
    The ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the replicates (numpy's default linear
    interpolation).

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, ch. 13 (the percentile
       interval), Chapman & Hall, 1993.

    Examples
    --------
    >>> percentile_interval(np.arange(101.0), level=0.5)
    (25.0, 75.0)
    >>> percentile_interval(np.array([np.nan]))
    (nan, nan)
    """
    finite = np.asarray(draws, dtype=float)
    finite = finite[np.isfinite(finite)]
    if not finite.size:
        return float("nan"), float("nan")
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)
