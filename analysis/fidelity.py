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
    """Additive smoothing of distributions over the last axis: ``(p + s) / (1 + K s)``.

    Examples
    --------
    >>> smooth(np.array([1.0, 0.0]), 0.5).tolist()
    [0.75, 0.25]
    """
    p = np.asarray(p, dtype=float)
    return (p + smoothing) / (1.0 + p.shape[-1] * smoothing)


def kl_divergence(p: np.ndarray, q: np.ndarray, smoothing: float = DEFAULT_SMOOTHING) -> np.ndarray:
    """KL(p || q) in nats over the last axis, after additive smoothing of both (see :func:`smooth`).

    Examples
    --------
    >>> from scipy.stats import entropy
    >>> p, q = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.5, 0.3])
    >>> bool(np.isclose(kl_divergence(p, q, smoothing=0.0), entropy(p, q)))
    True
    """
    ps, qs = smooth(p, smoothing), smooth(q, smoothing)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(ps > 0, ps * np.log(ps / qs), 0.0)
    return np.clip(terms.sum(axis=-1), 0.0, None)  # >= 0; rounding can leave -1e-17 for equal p, q


def js_distance(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jensen-Shannon distance (square root of the JS divergence), base 2, over the last axis.

    Examples
    --------
    >>> from scipy.spatial.distance import jensenshannon
    >>> p, q = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.5, 0.3])
    >>> bool(np.isclose(js_distance(p, q), jensenshannon(p, q, base=2)))
    True
    """
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    m = 0.5 * (p + q)

    def _kl(a: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(a > 0, a * np.log2(a / m), 0.0).sum(axis=-1)

    return np.sqrt(np.clip(0.5 * (_kl(p) + _kl(q)), 0.0, None))


def wasserstein_representativeness(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``1 - W1(p, q) / (K - 1)`` over ordinal positions 0..K-1 (last axis).

    W1 between distributions on equally spaced points is the summed absolute difference of the CDFs.

    Examples
    --------
    >>> from scipy.stats import wasserstein_distance
    >>> p, q = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.5, 0.3])
    >>> w1 = wasserstein_distance([0, 1, 2], [0, 1, 2], p, q)
    >>> bool(np.isclose(wasserstein_representativeness(p, q), 1 - w1 / 2))
    True
    """
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    k = p.shape[-1]
    w1 = np.abs(np.cumsum(p - q, axis=-1)[..., :-1]).sum(axis=-1)
    return 1.0 - w1 / (k - 1)


def normalized_entropy(p: np.ndarray) -> np.ndarray:
    """Shannon entropy divided by log K (1 = uniform, 0 = one option) over the last axis.

    Examples
    --------
    >>> from scipy.stats import entropy
    >>> p = np.array([0.6, 0.3, 0.1])
    >>> bool(np.isclose(normalized_entropy(p), entropy(p) / np.log(3)))
    True
    """
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.where(p > 0, p * np.log(p), 0.0).sum(axis=-1)
    return h / np.log(p.shape[-1])


def entropy_deviation(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``|H_norm(p) - H_norm(q)|`` (PSII's entropy deviation).

    Examples
    --------
    >>> round(float(entropy_deviation(np.array([1/3, 1/3, 1/3]), np.array([1.0, 0.0, 0.0]))), 6)
    1.0
    """
    return np.abs(normalized_entropy(p) - normalized_entropy(q))


def eta_squared(table: np.ndarray) -> np.ndarray:
    """Eta squared of the ordinal position (0..K-1) by group from (..., G, K) count tables.

    ``SS_between / SS_total`` with (weighted) counts as frequencies; groups with no answers add
    nothing; 0 when every answer sits at one position (no variance, so no gap between groups);
    NaN only for a table without answers.

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
    """Whether the answers of a (..., G, K) table sit at one option (eta^2 is then 0 by definition).

    Examples
    --------
    >>> no_variance(np.array([[3, 0], [5, 0]])).item(), no_variance(np.array([[3, 0], [0, 1]])).item()
    (True, False)
    """
    table = np.asarray(table, dtype=float)
    return (table.sum(axis=-2) > 0).sum(axis=-1) <= 1


def resample_index(n_units: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """(draws + 1, n_units) unit indices: row 0 the observed sample, then resamples with replacement.

    Examples
    --------
    >>> resample_index(3, 2, np.random.default_rng(0))[0].tolist()
    [0, 1, 2]
    """
    observed = np.arange(n_units)[None, :]
    return np.vstack([observed, rng.integers(0, max(n_units, 1), size=(draws, n_units))])


class Multiplicity(np.ndarray):
    """(draws + 1, n_units) times each unit is in each resample (row 0: all ones), the form a design
    resample takes (its size varies with the clusters drawn); see :func:`design_resample`."""


def design_resample(strata: np.ndarray | None, clusters: np.ndarray | None, draws: int,
                    rng: np.random.Generator) -> Multiplicity:
    """Resample a survey design: in every stratum, as many clusters as it has, drawn with replacement.

    ``strata`` / ``clusters`` label each unit (``None``: one stratum / every unit its own cluster).
    A unit's multiplicity in a draw is the number of times its cluster was drawn, so a resample keeps
    whole clusters and every stratum's number of clusters (the naive cluster bootstrap within strata).
    A stratum with a single cluster adds no variance.

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
    unit_counts
        (n_units, K) weighted answer counts per resampling unit (a respondent: its weight on its
        answer; a persona: all its samples, so personas are resampled as clusters).
    groups
        (n_units,) group index per unit in ``0..n_groups-1``; ``-1`` for a unit without a group
        (it is resampled but counted in no group table).
    index
        (draws + 1, n_units) unit indices, one resample per row, or a :class:`Multiplicity` (a design
        resample).

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
        option = unit_counts.argmax(axis=1)
        cell = slot * k + option
        flat = (np.arange(rows)[:, None] * (width * k) + cell[index]).ravel()
        mass = unit_counts.sum(axis=1)
        out = np.bincount(flat, weights=mass[index].ravel(), minlength=rows * width * k).reshape(rows, width, k)
        return out[:, :n_groups, :]
    flat = (np.arange(rows)[:, None] * width + slot[index]).ravel()
    out = np.empty((rows, width, k))
    for option in range(k):
        out[:, :, option] = np.bincount(flat, weights=unit_counts[index, option].ravel(),
                                        minlength=rows * width).reshape(rows, width)
    return out[:, :n_groups, :]


def distribution_metrics(human: np.ndarray, model: np.ndarray, *, ordinal: bool = True,
                         smoothing: float = DEFAULT_SMOOTHING) -> dict[str, np.ndarray]:
    """Every per-distribution measure of ``model`` against ``human`` ((..., K) count or probability arrays).

    Keys: kl_human_model, kl_model_human, js_distance, representativeness_w1 (ordinal questions only),
    entropy_norm_human, entropy_norm_model, entropy_deviation.

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
    """A percentile interval made to hold the observed ``value``: where the value lies outside it (a
    divergence near 0, whose every resample is farther away), the interval is extended to the metric's
    bound on that side (``bounds``: lower, upper; ``None``: to the value itself).

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
    """Percentile bootstrap interval of finite ``draws`` (NaN, NaN when there are none)."""
    finite = np.asarray(draws, dtype=float)
    finite = finite[np.isfinite(finite)]
    if not finite.size:
        return float("nan"), float("nan")
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)
