"""The denominators of ``vote_parse_error_rate`` under both ``vote_error_denominator`` settings, as docs/protocol.md
states them, for every shape a vote reply can take (``vote_shapes_provider``: one shape per voter, one round
of six honest agents under the reference's lenient reply handling).

``voters`` (the reference's rule): a ballot fails only on a parse or transport failure; a reply that parsed
without a usable vote is a cast ballot with no vote. Two of six calls failed: 2/6. ``rows``: the three
parsed replies without a usable vote leave no row and drop out: 2 failed of the 3 calls that left rows.
"""
from __future__ import annotations

import functools

import pytest
from vote_shapes_provider import VOTE_SHAPES

from pvsst.analysis.study.outcomes import honest_agent_ids, vote_call_failure_rate
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.providers.registry import register_scripted_provider
from pvsst.sim.protocol import protocol_from_preset
from pvsst.sim.topics import get_topic
from pvsst.sim.trial.run import run_trial
from pvsst.sim.trial.settings import TrialSetup


@functools.cache
def run(denominator: str):
    register_scripted_provider("vote_shapes", "vote_shapes_provider:VoteShapesProvider")
    config = TrialSetup(trial_id="t", model_name="scripted/vote_shapes", topic=get_topic("ai_labels"),
                        condition="likes", seed=101, n_agents=6, n_rounds=1,
                        protocol=protocol_from_preset("pvsst_reference", vote_error_denominator=denominator))

    async def no_wait(seconds: float) -> None:  # the reference waits 4.5 s after a failed call
        pass

    with Gateway(sleep=no_wait) as gateway:
        return run_trial(config, gateway)


@pytest.mark.parametrize("denominator, rate, voters_with_rows", [
    ("voters", 2 / 6, {"a00", "a01", "a02", "a03", "a04", "a05"}),
    ("rows", 2 / 3, {"a00", "a04", "a05"}),
])
def test_each_vote_reply_shape_counts_as_the_docs_state(denominator, rate, voters_with_rows):
    result = run(denominator)
    votes = result.votes
    assert set(votes["voter_id"]) == voters_with_rows
    by_voter = votes.groupby("voter_id")
    failed = {voter for voter, rows in by_voter if not rows["parse_ok"].all()}
    assert failed == {"a04", "a05"}  # not JSON (three parse attempts), no reply: the failed ballots
    assert votes.loc[votes["voter_id"] == "a00", "value"].tolist() == [1, 0, -1, 1, 0]
    if denominator == "voters":  # empty list, string, misspelt key: ballots cast with no vote
        cast = votes[votes["voter_id"].isin(["a01", "a02", "a03"])]
        assert len(cast) == 15 and cast["parse_ok"].all() and (cast["value"] == 0).all()
    assert vote_call_failure_rate(votes, honest_agent_ids(result.agents)) == pytest.approx(rate)
    statuses = result.llm_calls.set_index(["phase", "agent_id"])["status"]
    assert [statuses[("vote", f"a0{i}")] for i in range(len(VOTE_SHAPES))] == ["ok"] * 4 + ["parse_error", "error"]


def test_a_confidence_beyond_a_float_is_a_failed_generation_not_a_crash():
    result = run("voters")
    posts = result.posts.set_index("agent_id")
    initial = result.agents.set_index("agent_id")["initial_stance"]
    assert posts.loc["a01", "text"] == "(generation failed)" and not posts.loc["a01", "parse_ok"]
    assert posts.loc["a01", "stance"] == initial["a01"] and posts.loc["a01", "confidence"] == 0.7
    assert posts.loc["a00", "text"] == "Labels help." and posts.loc["a00", "parse_ok"]
