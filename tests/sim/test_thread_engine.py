"""The thread engine: SynthPAI's procedure on scripted models, reproducible, within its invariants.

The main study is the size the procedure names: 40 engaged personas, 2 rounds, 5 threads, over 45
census-seeded personas (5 authors + 40).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from thread_helpers import TOPICS, census_personas, run_study, study_tables

from pvsst.experiments.run.store import write_table_directory
from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.providers.registry import register_scripted_provider
from pvsst.sim.threads.invariants import ThreadInvariantError, assert_thread_invariants, thread_invariant_problems
from pvsst.sim.threads.plan import plan_threads
from pvsst.sim.threads.run import run_thread
from pvsst.sim.threads.settings import ThreadSettings

TESTS = Path(__file__).resolve().parents[1]
STUDY = ThreadSettings(n_threads=5)  # SynthPAI's defaults: 40 engaged, 2 rounds, 3 actions, depth 5, 3 children


@pytest.fixture(scope="module")
def study_results():
    return run_study(STUDY, census_personas(45))


@pytest.fixture(scope="module")
def study(study_results) -> dict[str, pd.DataFrame]:
    return study_tables(study_results)


WRITE_STUDY = """
import sys
from pathlib import Path
from pvsst.experiments.run.store import write_table_directory
from pvsst.sim.threads.settings import ThreadSettings
from thread_helpers import census_personas, run_study
for result in run_study(ThreadSettings(n_threads=5), census_personas(45), seed=int(sys.argv[2])):
    write_table_directory(Path(sys.argv[1]), result.plan.thread_id, result.tables())
"""


def _write_in_a_new_process(out: Path, seed: int) -> Path:
    done = subprocess.run([sys.executable, "-c", WRITE_STUDY, str(out), str(seed)], capture_output=True, text=True,
                          timeout=300, cwd=TESTS, env={**__import__("os").environ, "PYTHONPATH": str(TESTS)})
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.slow
def test_the_study_is_byte_identical_across_processes(tmp_path, study_results, study):
    here, other_seed = tmp_path / "here", tmp_path / "other"
    for result in study_results:
        write_table_directory(here, result.plan.thread_id, result.tables())
    for result in run_study(STUDY, census_personas(45), seed=6):
        write_table_directory(other_seed, result.plan.thread_id, result.tables())
    there = _write_in_a_new_process(tmp_path / "there", 5)
    threads = sorted(p.name for p in here.iterdir())
    assert threads == [f"thread-00{i}" for i in range(5)] == sorted(p.name for p in there.iterdir())
    for thread in threads:
        for table in ("comments", "actions", "agents", "comment_votes", "prompts"):
            name = f"{table}.parquet"
            assert (here / thread / name).read_bytes() == (there / thread / name).read_bytes()
        calls = [pd.read_parquet(d / thread / "llm_calls.parquet").drop(columns="latency_s") for d in (here, there)]
        pd.testing.assert_frame_equal(*calls)
        comments = "comments.parquet"
        assert (here / thread / comments).read_bytes() != (other_seed / thread / comments).read_bytes()
    assert len(study["comments"]) == sum(len(pd.read_parquet(here / t / "comments.parquet")) for t in threads)


def test_every_thread_keeps_its_invariants(study):
    comments = study["comments"]
    assert thread_invariant_problems(comments, max_depth=5, max_children=3) == []
    # the same rules, counted independently of the checker
    replies = comments[comments["parent_id"].notna()]
    parent = comments.set_index("comment_id").loc[replies["parent_id"]]
    assert replies["depth"].max() <= 5
    assert (replies["depth"].to_numpy() == parent["depth"].to_numpy() + 1).all()
    assert (replies["author"].to_numpy() != parent["author"].to_numpy()).all()
    assert not replies.duplicated(["parent_id", "author"]).any()
    per_parent = replies.groupby("parent_id").size()
    is_post = per_parent.index.str.endswith(":0")
    assert per_parent[~is_post].max() <= 3
    assert per_parent[is_post].min() > 3  # the post's replies are uncapped by default
    assert len(comments) > 5 * 60  # about 0.7 * 2 * 40 + 0.6 * 2 * 40 comments per thread


def test_the_procedure_as_the_original_runs_it(study):
    comments, actions, agents = study["comments"], study["actions"], study["agents"]
    replies = comments[comments["parent_id"].notna()]
    # the post is replied to in round 0 only; its author never comments; only engaged personas do
    assert set(replies.loc[replies["depth"] == 1, "round"]) == {0}
    posts = comments[comments["parent_id"].isna()].set_index("thread_id")["author"]
    assert (replies["author"].to_numpy() != replies["thread_id"].map(posts).to_numpy()).all()
    engaged = agents[agents["role"] == "engaged"]
    assert (engaged.groupby("thread_id").size() == 40).all()
    assert set(zip(replies["thread_id"], replies["author"])) <= set(zip(engaged["thread_id"], engaged["persona_id"]))
    # 1 to 3 actions per persona and round; comments with probability 0.7 in round 0, 0.6 in round 1
    per_turn = actions.groupby(["thread_id", "round", "author"]).size()
    assert per_turn.between(1, 3).all() and len(per_turn) == 5 * 2 * 40
    for round, p in ((0, 0.7), (1, 0.6)):
        drawn = actions[actions["round"] == round]
        share = (drawn["outcome"] != "abstain").mean()
        assert abs(share - p) < 4 * np.sqrt(p * (1 - p) / len(drawn)), (round, share)
    # short with probability 0.7
    short = (replies["length_class"] == "short").mean()
    assert abs(short - 0.7) < 4 * np.sqrt(0.21 / len(replies))
    # critics: at most 16 distinct per thread and round, and a persona is a critic for all its comments of a round
    critics = replies[replies["critic"]].groupby(["thread_id", "round"])["author"].nunique()
    assert critics.max() <= 16 and critics.mean() > 5
    assert (replies.groupby(["thread_id", "round", "author"])["critic"].nunique() == 1).all()
    # every comment action is in the comments table
    assert set(actions.loc[actions["outcome"] == "comment", "comment_id"]) == set(replies["comment_id"])


def test_the_prompt_shows_the_whole_path_the_length_and_the_critic_note(study):
    comments, prompts = study["comments"], study["prompts"].set_index("prompt_sha256")
    by_id = comments.set_index("comment_id")
    deep = comments[comments["depth"] == 4].iloc[0]
    user = prompts.loc[deep["prompt_sha256"], "user"]
    ancestors, node = [], deep["parent_id"]
    while isinstance(node, str):
        ancestors.append(by_id.loc[node])
        node = by_id.loc[node, "parent_id"]
    positions = [user.index(f'@{a["author"]}') for a in reversed(ancestors)]
    assert positions == sorted(positions) and len(ancestors) == 4  # post first, down to the parent
    for ancestor in ancestors:
        assert ancestor["text"] in user
    words = "in 1 to 10 words" if deep["length_class"] == "short" else "in 10 to 50 words"
    assert words in user
    assert ("ATTITUDE: you disagree" in user) == bool(deep["critic"])


def test_a_thread_is_the_same_whatever_the_number_of_threads():
    personas = census_personas(45)
    small = ThreadSettings(n_threads=2, engaged_profiles=10)
    two = run_study(small, personas, seed=9)
    three = run_study(small.model_copy(update={"n_threads": 3}), personas, seed=9)
    for a, b in zip(two, three):
        pd.testing.assert_frame_equal(a.comments, b.comments)


def test_original_caps_break_the_invariants_and_enforce_keeps_them():
    personas = census_personas(45)
    tight = dict(n_threads=1, engaged_profiles=20, max_depth=2, max_children=1)
    original = run_study(ThreadSettings(**tight, caps="original"), personas)[0].comments
    problems = thread_invariant_problems(original, max_depth=2, max_children=1)
    assert any("exceeds max_depth" in p for p in problems) and any("more than max_children" in p for p in problems)
    with pytest.raises(ThreadInvariantError, match="thread invariant"):
        assert_thread_invariants(original, ThreadSettings(**tight))
    enforced = run_study(ThreadSettings(**tight), personas)[0].comments
    assert thread_invariant_problems(enforced, max_depth=2, max_children=1) == []


class SilentProvider:
    """Replies with nothing: every call fails with status ``empty``."""

    name = "thread_silent"

    def reply(self, request):
        from pvsst.sim.llm.types import ProviderReply

        return ProviderReply(text="")


def test_failed_calls_are_recorded_and_leave_the_structure_alone():
    register_scripted_provider("thread_silent", f"{__name__}:SilentProvider")
    settings = ThreadSettings(engaged_profiles=10)
    silent = run_study(settings, census_personas(45), model="scripted/thread_silent")[0]
    spoken = run_study(settings, census_personas(45))[0]
    assert not silent.comments["reply_ok"].any() and (silent.comments["text"] == "").all()
    assert set(silent.llm_calls["status"]) == {"empty"}
    assert len(silent.llm_calls) == len(silent.comments)
    # where a comment goes never depends on what a comment says
    columns = ["comment_id", "parent_id", "author", "round", "critic", "length_class"]
    pd.testing.assert_frame_equal(silent.comments[columns], spoken.comments[columns])


def test_comment_votes_are_cast_and_rank_the_later_rounds():
    personas = census_personas(45)
    plain = run_study(ThreadSettings(engaged_profiles=12), personas)[0]
    voted = run_study(ThreadSettings(engaged_profiles=12, comment_votes=True, votes_per_voter=4), personas)[0]
    votes, comments = voted.comment_votes, voted.comments.set_index("comment_id")
    assert len(votes) and set(votes["value"]) <= {-1, 0, 1} and votes["ok"].all()
    assert votes.groupby(["round", "voter"]).size().max() <= 4
    assert (comments.loc[votes["comment_id"], "author"].to_numpy() != votes["voter"].to_numpy()).all()
    assert (comments.loc[votes["comment_id"], "round"].to_numpy() == votes["round"].to_numpy()).all()
    first = ["comment_id", "parent_id", "author"]
    round0 = [r.comments[r.comments["round"] <= 0][first].reset_index(drop=True) for r in (plain, voted)]
    pd.testing.assert_frame_equal(*round0)  # votes act from the next round on
    round1 = [r.comments[r.comments["round"] == 1].set_index("comment_id")["parent_id"] for r in (plain, voted)]
    assert not round1[0].equals(round1[1])  # ranked by net votes, round 1's top-k cut keeps other nodes
    calls = voted.llm_calls
    assert set(calls["phase"]) == {"thread_post", "comment", "comment_vote"}


def test_the_plan_records_a_seeded_engagement_draw():
    personas = census_personas(45)
    plans = plan_threads(STUDY, personas, TOPICS, seed=5, model_name="scripted/thread_commenter")
    authors = [p.author["persona_id"] for p in plans]
    assert len(set(authors)) == 5
    for index, plan in enumerate(plans):
        assert len(set(plan.engaged_ids)) == 40
        assert set(plan.engaged_ids).isdisjoint(authors[:index + 1])
    again = plan_threads(STUDY, personas, TOPICS, seed=5, model_name="scripted/thread_commenter")
    assert [p.engaged_ids for p in plans] == [p.engaged_ids for p in again]
    assert json.dumps([p.topic.id for p in plans])  # topics drawn from the study's list
    assert {p.topic.id for p in plans} <= {t.id for t in TOPICS}


@pytest.mark.slow
@pytest.mark.embedded
def test_a_thread_runs_on_the_embedded_model(tmp_path):
    pytest.importorskip("llama_cpp")
    settings = ThreadSettings(engaged_profiles=1, n_rounds=1, max_actions=1, comment_probability=1.0,
                              comment_probability_floor=1.0, max_tokens=24, post_max_tokens=48)
    plan = plan_threads(settings, census_personas(45), TOPICS, seed=2, model_name="embedded/smollm2-135m")[0]
    with Gateway(GatewayConfig(max_concurrency=1), max_attempts=1) as gateway:  # plumbing: one attempt a call is enough
        result = run_thread(plan, gateway)
    assert len(result.comments) == 2 and len(result.llm_calls) == 2
    assert result.comments.loc[1, "parent_id"] == result.comments.loc[0, "comment_id"]
    assert set(result.llm_calls["status"]) <= {"ok", "empty", "truncated"}
    assert result.comments.loc[result.comments["reply_ok"], "text"].str.len().gt(0).all()
