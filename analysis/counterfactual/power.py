"""The power of a counterfactual audit's omnibus test: the power at a size, the sets a shift needs, the
smallest shift a size detects.

The planted effect is one group's shift, everything else equal:

- ``shares`` (the chi-square of answer shares): one group's share of one option moves by ``shift``, the
  mass taken from its other options in proportion; ``base_share`` is that option's share in every group
  before the shift.
- ``scores`` (the centred option scores): one group's mean score moves by ``shift`` score points;
  ``score_sd`` is the residual standard deviation of a member's score around its set's level and its
  group's mean.

Both tests are read as a noncentral chi-square (the derivation is in :func:`noncentrality`). A question
is flagged when its Benjamini-Hochberg adjusted p is below ``alpha`` across a family of ``tests``
questions; with one shifted question among ``tests`` BH rejects it when its own p is below
``alpha / tests`` (no other discovery), so the plan tests at ``alpha / tests``: exact for one test,
slightly conservative for more.

Examples
--------
>>> sets_needed(0.15, n_groups=4, n_options=3, base_share=0.5)
202
>>> round(detectable_shift(202, n_groups=4, n_options=3, base_share=0.5), 3)
0.15
"""
from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.stats import chi2, ncx2

from pvsst.core.errors import InputError

STATISTICS = ("shares", "scores")
POWER = 0.80
MAX_SETS = 10_000_000


def _effect(shift: float, statistic: str, base_share: float, score_sd: float) -> float:
    """The shift in standard-deviation units of one member's answer (the square root of Cohen's w^2 per set)."""
    if statistic == "shares":
        return shift / math.sqrt(base_share * (1.0 - base_share))
    return shift / score_sd


def _check(n_groups: int, n_options: int, statistic: str, base_share: float, score_sd: float, alpha: float,
           tests: int, power: float) -> None:
    where = "audit power"
    if statistic not in STATISTICS:
        raise InputError(where, "statistic", f"{statistic!r} is not one of {', '.join(STATISTICS)}")
    if n_groups < 2:
        raise InputError(where, "groups", f"needs at least 2 groups, got {n_groups}")
    if statistic == "shares" and n_options < 2:
        raise InputError(where, "options", f"needs at least 2 options, got {n_options}")
    if statistic == "shares" and not 0.0 < base_share < 1.0:
        raise InputError(where, "base_share", f"must lie strictly between 0 and 1, got {base_share}")
    if statistic == "scores" and not score_sd > 0.0:
        raise InputError(where, "score_sd", f"must be positive, got {score_sd}")
    if not 0.0 < alpha < 1.0:
        raise InputError(where, "alpha", f"must lie strictly between 0 and 1, got {alpha}")
    if tests < 1:
        raise InputError(where, "tests", f"needs at least 1 test, got {tests}")
    if not 0.0 < power < 1.0:
        raise InputError(where, "power", f"must lie strictly between 0 and 1, got {power}")


def degrees_of_freedom(n_groups: int, n_options: int, statistic: str = "shares") -> int:
    """The degrees of freedom of the omnibus statistic's chi-square limit.

    Parameters
    ----------
    n_groups, n_options : int
        G and K.
    statistic : {"shares", "scores"}
        The omnibus statistic.

    Returns
    -------
    int
        (G - 1)(K - 1) for the shares statistic, G - 1 for the scores statistic.

    Examples
    --------
    >>> degrees_of_freedom(4, 3), degrees_of_freedom(4, 7, "scores")
    (6, 3)
    """
    return (n_groups - 1) * (n_options - 1) if statistic == "shares" else n_groups - 1


def noncentrality(n_sets: float, shift: float, *, n_groups: int, statistic: str = "shares", base_share: float = 0.5,
                  score_sd: float = 1.0) -> float:
    """The noncentrality of the omnibus statistic when one group of ``n_groups`` shifts by ``shift``.

    Parameters
    ----------
    n_sets : float
        S, the matched sets.
    shift : float
        The planted shift (a share for ``shares``, score points for ``scores``).
    n_groups : int
        G, the groups of a set.
    statistic : {"shares", "scores"}
        The omnibus statistic.
    base_share, score_sd : float
        The shifted option's share before the shift (``shares``), or the residual score SD (``scores``).

    Returns
    -------
    float
        lambda = S (G - 1) / G e^2, with e = shift / sqrt(p (1 - p)) (shares) or shift / sigma (scores).

    Notes
    -----
    Shares: members answer independently, group g option k with probability p_gk, so the G x K table of
    counts is G multinomial samples of S; Pearson's X^2 of homogeneity is asymptotically noncentral
    chi-square with (G - 1)(K - 1) degrees of freedom and lambda = S sum_{g,k} (p_gk - pbar_k)^2 / pbar_k
    (Mitra 1958; Cohen 1988, section 7.2, with w^2 = lambda / (S G)), pbar the shares under the null. One
    group shifted by the vector e (+delta on option k, -delta p_j / (1 - p) on every other option j) has
    p_gk - pbar_k = e_k (G - 1) / G for the shifted group and -e_k / G for the other G - 1, so
    sum_g (p_gk - pbar_k)^2 = e_k^2 (G - 1) / G and
    lambda = S (G - 1) / G [delta^2 / p + sum_j delta^2 p_j / (1 - p)^2] = S (G - 1) / G delta^2 / (p (1 - p)),
    whatever the other options' shares. Scores: x_sg = b_s + mu_g + e_sg with e_sg of variance sigma^2;
    the centred statistic T = sum_g (sum_s (x_sg - xbar_s))^2, divided by S sigma^2, is the randomised-block
    treatment statistic, asymptotically noncentral chi-square with G - 1 degrees of freedom and
    lambda = S sum_g (mu_g - mubar)^2 / sigma^2 = S (G - 1) / G delta^2 / sigma^2 for one group moved by
    delta. The within-set permutation test compares T with its permutations, whose scale is the
    within-set variance of the scores including the shift, sigma^2 + sum_g (mu_g - mubar)^2 / (G - 1) =
    sigma^2 (1 + e^2 / G), so its critical value is the chi-square quantile times 1 + e^2 / G
    (:func:`omnibus_power`); the Pearson statistic of the shares is already scaled by the pooled shares.
    Members of a set that answer alike (a
    shared persona and seed) make the within-set test stronger than independent members, so the shares
    model understates power (the plan errs toward more sets).

    References
    ----------
    .. [1] S. K. Mitra, "On the limiting power function of the frequency chi-square test", Annals of
       Mathematical Statistics 29(4), 1221-1233, 1958.
    .. [2] J. Cohen, *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed., Erlbaum, 1988,
       chapters 7 (chi-square tests) and 8 (F tests).

    Examples
    --------
    >>> round(noncentrality(100, 0.1, n_groups=2), 6)
    2.0
    """
    effect = _effect(shift, statistic, base_share, score_sd)
    return n_sets * (n_groups - 1) / n_groups * effect * effect


def omnibus_power(n_sets: float, shift: float, *, n_groups: int, n_options: int = 2, statistic: str = "shares",
                  base_share: float = 0.5, score_sd: float = 1.0, alpha: float = 0.05, tests: int = 1) -> float:
    """The chance the omnibus test flags a question whose one group shifts by ``shift``.

    Parameters
    ----------
    n_sets, shift, n_groups, statistic, base_share, score_sd
        As in :func:`noncentrality`.
    n_options : int
        K, the question's options (``shares``).
    alpha : float
        The false discovery rate.
    tests : int
        The Benjamini-Hochberg family's size (the test is made at ``alpha / tests``).

    Returns
    -------
    float
        1 - F(c; df, lambda), F the noncentral chi-square distribution function and c the central
        chi-square's 1 - alpha / tests quantile (for ``scores`` times 1 + e^2 / G, the permutation
        reference's scale; see :func:`noncentrality`).

    Notes
    -----
    The derivation of lambda is in :func:`noncentrality`; see the module docstring for ``alpha / tests``.

    References
    ----------
    .. [1] J. Cohen, *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed., Erlbaum, 1988.

    Examples
    --------
    >>> round(omnibus_power(100, 0.2, n_groups=2), 3)
    0.807
    """
    _check(n_groups, n_options, statistic, base_share, score_sd, alpha, tests, POWER)
    df = degrees_of_freedom(n_groups, n_options, statistic)
    critical = _critical(df, alpha, tests, n_groups, statistic, _effect(shift, statistic, base_share, score_sd))
    lam = noncentrality(n_sets, shift, n_groups=n_groups, statistic=statistic, base_share=base_share,
                        score_sd=score_sd)
    return float(ncx2.sf(critical, df, lam)) if lam > 0 else alpha / tests


def _critical(df: int, alpha: float, tests: int, n_groups: int, statistic: str, effect: float) -> float:
    scale = 1.0 + effect * effect / n_groups if statistic == "scores" else 1.0
    return float(chi2.ppf(1.0 - alpha / tests, df)) * scale


def _lambda_needed(df: int, critical: float, power: float) -> float:
    high = 1.0
    while ncx2.sf(critical, df, high) < power:
        high *= 2.0
    return brentq(lambda lam: ncx2.sf(critical, df, lam) - power, 0.0, high, xtol=1e-10)


def sets_needed(shift: float, *, n_groups: int, n_options: int = 2, statistic: str = "shares",
                base_share: float = 0.5, score_sd: float = 1.0, alpha: float = 0.05, tests: int = 1,
                power: float = POWER) -> int:
    """The fewest matched sets at which the omnibus test flags a shift of ``shift`` with ``power``.

    Parameters
    ----------
    shift, n_groups, n_options, statistic, base_share, score_sd, alpha, tests
        As in :func:`omnibus_power`.
    power : float
        The target power.

    Returns
    -------
    int
        ceil(lambda* G / ((G - 1) e^2)), lambda* the noncentrality at which the noncentral chi-square
        exceeds the critical value with probability ``power``.

    Notes
    -----
    lambda is linear in S (:func:`noncentrality`), so S = lambda* / (lambda at one set).

    References
    ----------
    .. [1] J. Cohen, *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed., Erlbaum, 1988.

    Examples
    --------
    >>> sets_needed(0.2, n_groups=2)
    99
    """
    _check(n_groups, n_options, statistic, base_share, score_sd, alpha, tests, power)
    if not shift > 0 or (statistic == "shares" and shift > 1.0 - base_share):
        limit = f" and at most 1 - base_share = {1.0 - base_share:g}" if statistic == "shares" else ""
        raise InputError("audit power", "effect", f"the shift must be positive{limit}, got {shift}")
    per_set = noncentrality(1.0, shift, n_groups=n_groups, statistic=statistic, base_share=base_share,
                            score_sd=score_sd)
    df = degrees_of_freedom(n_groups, n_options, statistic)
    critical = _critical(df, alpha, tests, n_groups, statistic, _effect(shift, statistic, base_share, score_sd))
    needed = _lambda_needed(df, critical, power) / per_set
    return max(2, min(MAX_SETS, math.ceil(needed - 1e-9)))


def detectable_shift(n_sets: float, *, n_groups: int, n_options: int = 2, statistic: str = "shares",
                     base_share: float = 0.5, score_sd: float = 1.0, alpha: float = 0.05, tests: int = 1,
                     power: float = POWER) -> float:
    """The minimum detectable effect: the smallest shift the omnibus test flags with ``power`` at ``n_sets``.

    Parameters
    ----------
    n_sets, n_groups, n_options, statistic, base_share, score_sd, alpha, tests, power
        As in :func:`sets_needed`.

    Returns
    -------
    float
        e* sqrt(p (1 - p)) (shares) or e* sigma (scores), e* = sqrt(lambda* G / ((G - 1) S)) (for scores
        solved numerically, the critical value depending on e); NaN for fewer than 2 sets; infinite for
        scores when no shift reaches that power at ``n_sets`` (the reference widens as fast). A shares
        shift larger than 1 - base_share is not possible; the value is returned anyway and reads as "no
        possible shift is detected with that power".

    Notes
    -----
    The inverse of :func:`sets_needed` in the shift (see :func:`noncentrality`).

    References
    ----------
    .. [1] J. Cohen, *Statistical Power Analysis for the Behavioral Sciences*, 2nd ed., Erlbaum, 1988.

    Examples
    --------
    >>> round(detectable_shift(100, n_groups=2), 3)
    0.198
    """
    _check(n_groups, n_options, statistic, base_share, score_sd, alpha, tests, power)
    if not n_sets >= 2:
        return float("nan")
    df = degrees_of_freedom(n_groups, n_options, statistic)

    def effect_at(effect: float) -> float:
        lam = _lambda_needed(df, _critical(df, alpha, tests, n_groups, statistic, effect), power)
        return math.sqrt(lam * n_groups / ((n_groups - 1) * n_sets))

    effect = effect_at(0.0)
    if statistic == "scores":
        # The fixed point e = e_at(e). e_at grows with e; at a few sets it grows at least as fast as e (the
        # permutation reference widens with the shift as fast as the shift grows), and no shift is
        # flagged with that power: the detectable shift is infinite.
        high = 10.0 * effect + 10.0
        while effect_at(high) > high:
            if high > 1e3:
                return math.inf
            high *= 10.0
        effect = brentq(lambda e: effect_at(e) - e, effect, high, xtol=1e-12)
    return effect * (math.sqrt(base_share * (1.0 - base_share)) if statistic == "shares" else score_sd)
