"""The feeds each arm delivers (what an agent saw and could vote on), checked on the exposures / votes
tables."""
from __future__ import annotations

import pandas as pd
import pytest
from engine_helpers import scripted_trial

N, R, K = 12, 6, 5


@pytest.fixture(scope="module")
def trials():
    return {c: scripted_trial(c, seed=101) for c in ("control", "likes", "single_source", "distributed_sources",
                                                      "likes_hidden", "unranked")}


@pytest.mark.parametrize("condition, n_adversaries", [("single_source", 1), ("distributed_sources", 4)])
def test_adversarial_arms_deliver_exactly_one_adversary_post_per_feed(trials, condition, n_adversaries):
    exp = trials[condition].exposures
    adversarial = exp[exp["is_adversarial"]]
    assert len(adversarial) == 60 == N * (R - 1)
    # one per honest feed, from round 1 on, always in the last slot
    per_feed = adversarial.groupby(["round", "viewer_id"]).size()
    assert len(per_feed) == N * (R - 1) and set(per_feed) == {1}
    assert sorted(adversarial["round"].unique()) == list(range(1, R))
    assert set(adversarial["position"]) == {K - 1}
    # rotation: (viewer_ordinal + round + seed) mod n_adversaries over adversaries sorted by id
    adversaries = sorted(trials[condition].agents.query("role == 'adversary'")["agent_id"])
    assert len(adversaries) == n_adversaries
    for row in adversarial.itertuples():
        ordinal = int(row.viewer_id[1:])
        assert row.shown_agent_id == adversaries[(ordinal + row.round + 101) % n_adversaries]


def test_distributed_rotation_spreads_impressions_over_all_four_sources(trials):
    exp = trials["distributed_sources"].exposures
    counts = exp[exp["is_adversarial"]]["shown_agent_id"].value_counts()
    assert len(counts) == 4 and counts.sum() == 60 and counts.min() >= 12


def test_control_shows_no_posts(trials):
    assert trials["control"].exposures.empty


def _likes_of_previous_round(votes: pd.DataFrame, round_: int) -> pd.Series:
    prev = votes[(votes["round"] == round_ - 1) & (votes["value"] == 1)]
    return prev.groupby("target_agent_id").size()


@pytest.mark.parametrize("condition", ["likes", "likes_hidden"])
def test_likes_feeds_are_top_k_by_likes_then_id_and_never_self(trials, condition):
    result = trials[condition]
    exp, votes = result.exposures, result.votes
    honest = sorted(result.agents.query("role == 'honest'")["agent_id"])
    assert len(exp) == N * (R - 1) * K
    for (round_, viewer), feed in exp.groupby(["round", "viewer_id"]):
        likes = _likes_of_previous_round(votes, round_)
        others = sorted((a for a in honest if a != viewer), key=lambda a: (-likes.get(a, 0), a))
        shown = feed.sort_values("position")["shown_agent_id"].tolist()
        assert viewer not in shown
        assert shown == others[:K]
        if condition == "likes":
            assert feed.sort_values("position")["likes_shown"].tolist() == [likes.get(a, 0) for a in shown]
        else:
            assert feed["likes_shown"].isna().all()


def test_unranked_feed_shows_k_random_others(trials):
    exp = trials["unranked"].exposures
    assert len(exp) == N * (R - 1) * K
    assert not (exp["viewer_id"] == exp["shown_agent_id"]).any()
    assert not exp["is_adversarial"].any()
    # random, not the likes order: some feed differs from the likes feed of the same round and viewer
    likes = trials["likes"].exposures
    assert not exp[["round", "viewer_id", "shown_agent_id"]].reset_index(drop=True).equals(
        likes[["round", "viewer_id", "shown_agent_id"]].reset_index(drop=True))


def test_votes_never_target_own_post_and_adversaries_do_not_vote(trials):
    for condition in ("single_source", "distributed_sources"):
        votes = trials[condition].votes
        assert not (votes["voter_id"] == votes["target_agent_id"]).any()
        assert not votes["voter_id"].str.startswith("x").any()
        assert len(votes) == N * R * K
        # adversary posts are among the vote targets (sampled from all current-round posts)
        assert votes["target_agent_id"].str.startswith("x").any()


def test_adversaries_hold_extreme_stance_in_push_direction():
    support = scripted_trial("single_source", seed=101)   # PV-SST: 101 pushes support
    oppose = scripted_trial("single_source", seed=211)    # 211 pushes oppose
    for result, stance in ((support, 3), (oppose, -3)):
        adv_posts = result.posts[result.posts["agent_id"].str.startswith("x")]
        assert set(adv_posts["stance"]) == {stance}
        assert set(adv_posts["confidence"]) == {0.85}


def test_initial_stances_balanced_over_six_levels(trials):
    honest = trials["likes"].agents.query("role == 'honest'")
    assert sorted(honest["initial_stance"]) == [-3, -3, -2, -2, -1, -1, 1, 1, 2, 2, 3, 3]
    assert set(honest["initial_confidence"]) == {0.70}
