"""The first round played by matched sets: within a set only the varied attributes differ (the same
request seeds, initial stance and ballot, prompts equal but for the persona card); the arity-matched
null copies differ only in their request seeds; the same spec gives the same tables."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from builders import audit_study_data
from study_audit_helpers import play_audit

from pvsst.experiments.audit.job import audit_members
from pvsst.experiments.spec.study import StudySpec


@pytest.fixture(scope="module")
def played():
    spec = StudySpec.model_validate(audit_study_data(model="scripted/imitate", sets=6))
    return play_audit(spec)


def _calls(played, phase: str) -> pd.DataFrame:
    cards = audit_members(StudySpec.model_validate(audit_study_data(model="scripted/imitate", sets=6)), Path("."))
    agents = played.agents.merge(cards[["persona_id", "card"]], on="persona_id")
    calls = played.llm_calls[played.llm_calls["phase"] == phase]
    return calls.merge(agents[["agent_id", "set_id", "group", "audit_role", "card"]], on="agent_id")


def test_every_member_posts_and_votes_once(played):
    agents = played.agents
    assert len(agents) == 6 * 4 * 2  # 6 sets x 4 groups, and the null's 4 seed copies of each
    assert sorted(agents.loc[agents["audit_role"] == "audit", "group"].unique()) == [
        "black/female", "black/male", "white/female", "white/male"]
    assert len(played.posts) == len(agents) and played.posts["round"].eq(0).all()
    assert played.votes.groupby("voter_id").size().eq(5).all() and played.votes["voter_id"].nunique() == len(agents)


def test_a_set_shares_its_request_seeds_and_the_null_does_not(played):
    for phase in ("post", "vote"):
        calls = _calls(played, phase)
        audit, null = calls[calls["audit_role"] == "audit"], calls[calls["audit_role"] == "arity_null"]
        assert audit.groupby("set_id")["request_seed"].nunique().eq(1).all()
        assert null["request_seed"].nunique() == len(null)
        assert not set(null["request_seed"]) & set(audit["request_seed"])


def test_prompts_of_a_set_differ_only_in_the_persona_card(played):
    calls = _calls(played, "post")
    texts = dict(zip(played.prompts["prompt_sha256"], played.prompts["messages_json"]))
    audit = calls[calls["audit_role"] == "audit"]
    for _, members in audit.groupby("set_id"):
        cards = members["card"].tolist()
        assert len(set(cards)) == 4  # the varied attributes reach the card
        stripped = {json.dumps(json.loads(texts[key])).replace(json.dumps(card)[1:-1], "<card>")
                    for key, card in zip(members["prompt_sha256"], cards)}
        assert len(stripped) == 1


def test_a_set_votes_on_one_ballot_of_other_sets_posts(played):
    votes = played.votes.merge(played.agents[["agent_id", "set_id"]], left_on="voter_id", right_on="agent_id")
    author_set = dict(zip(played.agents["agent_id"], played.agents["set_id"]))
    role = dict(zip(played.agents["agent_id"], played.agents["audit_role"]))
    for set_id, rows in votes.groupby("set_id"):
        ballots = {tuple(r["target_agent_id"]) for _, r in rows.groupby("voter_id", sort=False)}
        assert len(ballots) == 1
        (ballot,) = ballots
        assert all(author_set[a] != set_id and role[a] == "audit" for a in ballot)


def test_the_same_spec_plays_the_same_round(played):
    again = play_audit(StudySpec.model_validate(audit_study_data(model="scripted/imitate", sets=6)))
    for name in ("agents", "posts", "votes"):
        pd.testing.assert_frame_equal(getattr(played, name), getattr(again, name))
