"""Do agents act on the stance they report? Posts and votes of a trial against the reported stances.

Every honest agent reports a stance label with each post (``posts.parquet`` ``stance``, -3..3, the
stance after that round's update); a stance judge reads the post (the judged-stance table,
``trial_id, round, agent_id, judged_stance``). Per agent-round, with reported ``r`` and judged ``j``:

================================  ===========================================================
exact_agreement                   ``j == r``
side_agreement                    ``sign(j) == sign(r)`` (support / neutral / oppose)
contradiction                     ``sign(j) * sign(r) < 0``: the post argues the other side
signed_gap                        ``j - r``
================================  ===========================================================

Votes against stances: a vote of voter ``v`` on the post of author ``a`` in round ``t`` is *same-side*
when ``sign(s_v) == sign(s_a)`` and *other-side* when they are opposite (a neutral voter or author has
no side and is left out), with ``s_v`` the voter's stance in round ``t`` and ``s_a`` the stance the
author reported with that post. Per trial: the like rate (``value == 1``) of same-side and of
other-side votes, and beside them the chance rate: the like rate of all sided votes, which both would
equal if likes ignored stance. Only replies that parsed count (a failed reply reports no stance).

Mannekote et al. (arXiv 2507.02197) elicit an agent's belief and compare it with its action; here the
belief is the reported label and the action the post (read by a judge) and the votes. The judge's own
error bounds what these numbers can show: read them beside :mod:`pvsst.analysis.consistency.judge_agreement`.

Per-trial values are aggregated per model and arm with a percentile bootstrap over blocks
(:func:`pvsst.analysis.stats.block_tests.bootstrap_mean_ci_batch`: a fresh ``default_rng(seed)`` per vector length,
the plan's draws, seed and alpha, recorded beside every row), or with fewer than 20 blocks a Student-t
interval (``interval`` = ``t``).

Examples
--------
>>> import pandas as pd
>>> posts = pd.DataFrame({"trial_id": "t", "round": 0, "agent_id": ["a", "b", "c"],
...                       "stance": [2, -1, 1], "parse_ok": True})
>>> judged = posts[["trial_id", "round", "agent_id"]].assign(judged_stance=[2, 1, 0])
>>> columns = ["exact_agreement", "side_agreement", "contradiction", "signed_gap"]
>>> stance_consistency(posts, judged)[columns].values.tolist()
[[True, True, False, 0], [False, False, True, 2], [False, False, False, -1]]
>>> votes = pd.DataFrame({"trial_id": "t", "round": 0, "voter_id": ["a", "a", "b"],
...                       "target_agent_id": ["c", "b", "a"], "value": [1, 0, 0], "parse_ok": True})
>>> row = trial_consistency(stance_consistency(posts, judged), vote_sides(posts, votes)).iloc[0]
>>> float(row["like_rate_same_side"]), float(row["like_rate_other_side"]), round(float(row["like_rate_chance"]), 4)
(1.0, 0.0, 0.3333)
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pvsst.analysis.stats.block_tests import FEW_BLOCKS, bootstrap_mean_ci_batch, t_mean_ci
from pvsst.analysis.stats.paired import require_columns
from pvsst.analysis.stats.plan import CONSISTENCY_METRICS, PVSST_BLOCK
from pvsst.core.defaults import ANALYSIS_SEED, BOOTSTRAP_DRAWS

POST_KEY = ["trial_id", "round", "agent_id"]
STANCE_COLUMNS = ("trial_id", "round", "agent_id", "reported_stance", "judged_stance", "exact_agreement",
                  "side_agreement", "contradiction", "signed_gap")
VOTE_SIDE_COLUMNS = ("trial_id", "round", "voter_id", "target_agent_id", "voter_stance", "author_stance",
                     "same_side", "liked")
SUMMARY_COLUMNS = ("metric", "n_blocks", "mean", "ci_low", "ci_high", "interval", "bootstrap_draws", "bootstrap_seed",
                   "alpha")


def _honest(frame: pd.DataFrame, agents: pd.DataFrame | None, column: str) -> pd.DataFrame:
    """Rows of ``frame`` whose ``column`` names an honest agent of its trial (all rows without ``agents``)."""
    if agents is None or "role" not in agents.columns:
        return frame
    require_columns(agents, ["trial_id", "agent_id", "role"], "agents")
    honest = agents.loc[agents["role"] == "honest", ["trial_id", "agent_id"]].rename(columns={"agent_id": column})
    return frame.merge(honest, on=["trial_id", column], how="inner")


def stance_consistency(posts: pd.DataFrame, judged: pd.DataFrame, agents: pd.DataFrame | None = None
                       ) -> pd.DataFrame:
    """Per agent-round agreement of the judged stance of a post with the stance reported beside it.

    Parameters
    ----------
    posts : pandas.DataFrame
        ``trial_id, round, agent_id, stance, parse_ok`` (a run's posts).
    judged : pandas.DataFrame
        ``trial_id, round, agent_id, judged_stance`` (one judge's judged-stance table; a post with an
        empty ``judged_stance``, whose judge call failed, is left out).
    agents : pandas.DataFrame, optional
        ``trial_id, agent_id, role``; when given, only honest agents are kept.

    Returns
    -------
    pandas.DataFrame
        :data:`STANCE_COLUMNS`, one row per parsed post that the judge read.

    Notes
    -----
    With reported stance ``r`` and judged stance ``j``: ``exact_agreement = (j == r)``,
    ``side_agreement = (sign(j) == sign(r))``, ``contradiction = (sign(j) sign(r) < 0)`` and
    ``signed_gap = j - r``.

    References
    ----------
    .. [1] A. Mannekote et al., "Do Role-Playing Agents Practice What They Preach? Belief-Behavior
       Consistency in LLM-Based Simulations of Human Trust", arXiv 2507.02197, 2025.

    Examples
    --------
    >>> posts = pd.DataFrame({"trial_id": "t", "round": 0, "agent_id": ["a"], "stance": [-3], "parse_ok": True})
    >>> judged = posts[["trial_id", "round", "agent_id"]].assign(judged_stance=[-1])
    >>> stance_consistency(posts, judged)[["side_agreement", "signed_gap"]].values.tolist()
    [[True, 2]]
    """
    require_columns(posts, [*POST_KEY, "stance", "parse_ok"], "posts")
    require_columns(judged, [*POST_KEY, "judged_stance"], "judged stances")
    parsed = posts.loc[posts["parse_ok"].astype(bool), [*POST_KEY, "stance"]]
    judged = judged.loc[judged["judged_stance"].notna(), [*POST_KEY, "judged_stance"]]
    both = _honest(parsed, agents, "agent_id").merge(judged, on=POST_KEY,
                                                    how="inner", validate="one_to_one")
    r = both["stance"].to_numpy(int)
    j = both["judged_stance"].to_numpy(int)
    return pd.DataFrame({**{k: both[k].to_numpy() for k in POST_KEY}, "reported_stance": r, "judged_stance": j,
                         "exact_agreement": j == r, "side_agreement": np.sign(j) == np.sign(r),
                         "contradiction": np.sign(j) * np.sign(r) < 0, "signed_gap": j - r},
                        columns=list(STANCE_COLUMNS))


def vote_sides(posts: pd.DataFrame, votes: pd.DataFrame, agents: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each parsed vote of a sided voter on the post of a sided author, marked same-side or not.

    Parameters
    ----------
    posts : pandas.DataFrame
        ``trial_id, round, agent_id, stance, parse_ok``: the voter's stance in a round is the one on its
        post row of that round; the author's is the one it reported with the voted post (parsed).
    votes : pandas.DataFrame
        ``trial_id, round, voter_id, target_agent_id, value, parse_ok``.
    agents : pandas.DataFrame, optional
        ``trial_id, agent_id, role``; when given, only votes of honest voters are kept.

    Returns
    -------
    pandas.DataFrame
        :data:`VOTE_SIDE_COLUMNS` (``liked``: ``value == 1``).

    Notes
    -----
    A vote is same-side when ``sign(s_voter) == sign(s_author)`` and other-side when they are opposite;
    a neutral (0) voter or author has no side and is left out.

    References
    ----------
    .. [1] A. Mannekote et al., "Do Role-Playing Agents Practice What They Preach? Belief-Behavior
       Consistency in LLM-Based Simulations of Human Trust", arXiv 2507.02197, 2025.

    Examples
    --------
    >>> posts = pd.DataFrame({"trial_id": "t", "round": 0, "agent_id": ["a", "b"], "stance": [2, 1],
    ...                       "parse_ok": True})
    >>> votes = pd.DataFrame({"trial_id": "t", "round": 0, "voter_id": ["a"], "target_agent_id": ["b"],
    ...                       "value": [1], "parse_ok": True})
    >>> vote_sides(posts, votes)[["same_side", "liked"]].values.tolist()
    [[True, True]]
    """
    require_columns(posts, [*POST_KEY, "stance", "parse_ok"], "posts")
    require_columns(votes, ["trial_id", "round", "voter_id", "target_agent_id", "value", "parse_ok"], "votes")
    cast = votes.loc[votes["parse_ok"].astype(bool)]
    cast = _honest(cast, agents, "voter_id")
    voter = posts[[*POST_KEY, "stance"]].drop_duplicates(POST_KEY, keep="last").rename(
        columns={"agent_id": "voter_id", "stance": "voter_stance"})
    author = posts.loc[posts["parse_ok"].astype(bool), [*POST_KEY, "stance"]].drop_duplicates(POST_KEY, keep="last")
    author = author.rename(columns={"agent_id": "target_agent_id", "stance": "author_stance"})
    rows = cast.merge(voter, on=["trial_id", "round", "voter_id"]).merge(
        author, on=["trial_id", "round", "target_agent_id"])
    rows = rows[(rows["voter_stance"] != 0) & (rows["author_stance"] != 0)]
    same = np.sign(rows["voter_stance"].to_numpy(int)) == np.sign(rows["author_stance"].to_numpy(int))
    return pd.DataFrame({"trial_id": rows["trial_id"].to_numpy(), "round": rows["round"].to_numpy(),
                         "voter_id": rows["voter_id"].to_numpy(), "target_agent_id": rows["target_agent_id"].to_numpy(),
                         "voter_stance": rows["voter_stance"].to_numpy(int),
                         "author_stance": rows["author_stance"].to_numpy(int), "same_side": same,
                         "liked": rows["value"].to_numpy(int) == 1}, columns=list(VOTE_SIDE_COLUMNS))


def trial_consistency(stances: pd.DataFrame, sides: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per trial: the means of :func:`stance_consistency` and the like rates of :func:`vote_sides`.

    Parameters
    ----------
    stances : pandas.DataFrame
        :func:`stance_consistency` rows (``trial_id`` and its four measures).
    sides : pandas.DataFrame, optional
        :func:`vote_sides` rows.

    Returns
    -------
    pandas.DataFrame
        ``trial_id``, :data:`CONSISTENCY_METRICS`, ``n_judged_posts``, ``n_sided_votes``. A rate with no
        vote to count is NaN (e.g. no other-side vote in a trial).

    Notes
    -----
    Per trial: the mean exact agreement, side agreement, contradiction rate and signed gap over its
    judged posts; ``like_rate_same_side`` and ``like_rate_other_side`` are the shares of likes among
    same-side and other-side votes, ``like_rate_chance`` the share among all sided votes (what both would
    be if likes ignored stance), and ``same_side_like_gap`` = same-side rate - other-side rate.

    References
    ----------
    .. [1] A. Mannekote et al., "Do Role-Playing Agents Practice What They Preach? Belief-Behavior
       Consistency in LLM-Based Simulations of Human Trust", arXiv 2507.02197, 2025.

    Examples
    --------
    >>> stances = pd.DataFrame({"trial_id": "t", "exact_agreement": [True, False], "side_agreement": True,
    ...                         "contradiction": False, "signed_gap": [0, -1]})
    >>> row = trial_consistency(stances).iloc[0]
    >>> float(row["stance_exact_agreement"]), float(row["stance_signed_gap"]), bool(np.isnan(row["like_rate_chance"]))
    (0.5, -0.5, True)
    """
    per_trial = stances.groupby("trial_id", sort=False).agg(
        stance_exact_agreement=("exact_agreement", "mean"), stance_side_agreement=("side_agreement", "mean"),
        stance_contradiction_rate=("contradiction", "mean"), stance_signed_gap=("signed_gap", "mean"),
        n_judged_posts=("signed_gap", "size"))
    if sides is not None and len(sides):
        liked = sides.assign(same=sides["liked"].where(sides["same_side"]),
                             other=sides["liked"].where(~sides["same_side"]))
        votes = liked.groupby("trial_id", sort=False).agg(
            like_rate_same_side=("same", "mean"), like_rate_other_side=("other", "mean"),
            like_rate_chance=("liked", "mean"), n_sided_votes=("liked", "size"))
        per_trial = per_trial.join(votes, how="outer")
    for column in ("like_rate_same_side", "like_rate_other_side", "like_rate_chance"):
        if column not in per_trial:
            per_trial[column] = np.nan
    per_trial["same_side_like_gap"] = per_trial["like_rate_same_side"] - per_trial["like_rate_other_side"]
    per_trial["n_judged_posts"] = per_trial["n_judged_posts"].fillna(0).astype(int)
    per_trial["n_sided_votes"] = per_trial.get("n_sided_votes", pd.Series(0,
                                                                          index=per_trial.index)).fillna(0).astype(int)
    per_trial = per_trial.astype({m: float for m in CONSISTENCY_METRICS})
    return per_trial.reset_index()[["trial_id", *CONSISTENCY_METRICS, "n_judged_posts", "n_sided_votes"]]


def consistency_by_arm(per_trial: pd.DataFrame, trials: pd.DataFrame, *, by: Sequence[str] = ("model", "condition"),
                       metrics: Sequence[str] = CONSISTENCY_METRICS, block: Sequence[str] = PVSST_BLOCK,
                       draws: int = BOOTSTRAP_DRAWS, seed: int = ANALYSIS_SEED, alpha: float = 0.05) -> pd.DataFrame:
    """Mean of each consistency metric per ``by`` group with a percentile bootstrap interval over blocks.

    Parameters
    ----------
    per_trial : pandas.DataFrame
        The table of :func:`trial_consistency` (``trial_id`` + metrics).
    trials : pandas.DataFrame
        One row per trial with ``trial_id`` and the ``by`` and ``block`` columns (the run's trials).
    by : sequence of str
        The grouping (default model x arm).
    metrics : sequence of str
        The metrics to summarise.
    block : sequence of str
        The block factors; the trials of one block within a group are averaged first, so each block is
        one resampling unit.
    draws, seed, alpha
        The bootstrap (the analysis plan's values), recorded in every row.

    Returns
    -------
    pandas.DataFrame
        One row per group x metric: the ``by`` columns and :data:`SUMMARY_COLUMNS`. ``n_blocks`` counts
        the blocks with a value (NaN trials, e.g. without other-side votes, are left out).

    Notes
    -----
    Over the ``n`` block means ``y_b`` of a group: ``mean = (1/n) sum_b y_b`` and ``[ci_low, ci_high]`` the
    percentile bootstrap interval of the mean at ``1 - alpha``
    (:func:`pvsst.analysis.stats.block_tests.bootstrap_mean_ci_batch`), or with fewer than
    :data:`pvsst.analysis.stats.block_tests.FEW_BLOCKS` blocks the Student-t interval
    (:func:`pvsst.analysis.stats.block_tests.t_mean_ci`: a bootstrap of 4 blocks is about 40% too narrow);
    ``interval`` says which. A rate is above a tolerance ``t`` (e.g.
    the judge's own error rate) at one-sided level ``alpha / 2`` when ``ci_low > t``.

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, ch. 13, Chapman & Hall,
       1993.

    Examples
    --------
    >>> per_trial = pd.DataFrame({"trial_id": ["1", "2", "3"], "stance_side_agreement": [1.0, 0.5, 0.75]})
    >>> trials = pd.DataFrame({"trial_id": ["1", "2", "3"], "model": "m", "condition": "likes",
    ...                        "topic_id": "t", "seed": [1, 2, 3]})
    >>> row = consistency_by_arm(per_trial, trials, metrics=["stance_side_agreement"], draws=200).iloc[0]
    >>> int(row["n_blocks"]), float(row["mean"]), row["interval"], round(float(row["ci_high"] - row["ci_low"]), 3)
    (3, 0.75, 't', 1.242)
    """
    by, metrics = list(by), list(metrics)
    require_columns(per_trial, ["trial_id", *metrics], "per-trial consistency")
    require_columns(trials, ["trial_id", *by], "trials")
    block = [c for c in block if c in trials.columns and c not in by]
    table = trials[["trial_id", *by, *block]].merge(per_trial[["trial_id", *metrics]], on="trial_id", how="inner")
    rows = []
    for key, group in table.groupby(by, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        blocks = group.groupby(block, sort=False)[metrics].mean() if block else group[metrics]
        vectors = [blocks[m].dropna().to_numpy(float) for m in metrics]
        low, high = bootstrap_mean_ci_batch(vectors, draws=draws, seed=seed, alpha=alpha)
        for metric, values, lo, hi in zip(metrics, vectors, low, high):
            method = "t" if values.size < FEW_BLOCKS else "bootstrap"
            if method == "t":
                lo, hi = t_mean_ci(values, alpha)
            rows.append({**dict(zip(by, key)), "metric": metric, "n_blocks": int(values.size),
                         "mean": float(values.mean()) if values.size else float("nan"),
                         "ci_low": float(lo), "ci_high": float(hi), "interval": method, "bootstrap_draws": int(draws),
                         "bootstrap_seed": int(seed), "alpha": float(alpha)})
    return pd.DataFrame(rows, columns=[*by, *SUMMARY_COLUMNS])
