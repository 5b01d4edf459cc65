"""The ``pvsst_reference`` preset reproduces the reference implementation's mechanics.

Each expected value is derived here, independently of the engine, from the procedure facts of PV-SST's
reference code (``src/experiments/confirmatory.py`` and ``src/agents.py`` at its commit 1ba07d5f): Python's
``random`` with the reference's seed offsets, its stance layout, its vote eligibility rule and its
adversary-slot rotation.
"""
from __future__ import annotations

import random

import pytest
from engine_helpers import scripted_trial

from pvsst.core.errors import InputError
from pvsst.sim.persona_table import load_persona_table
from pvsst.sim.protocol import protocol_from_preset
from pvsst.sim.topics import get_topic
from pvsst.sim.trial.run import prepare_trial
from pvsst.sim.trial.settings import TrialSetup

REFERENCE = protocol_from_preset("pvsst_reference")
LABEL_SCORE = {"strongly support": 3, "support": 2, "lean support": 1, "lean oppose": -1, "oppose": -2,
               "strongly oppose": -3}


def reference_stances(n: int, seed: int) -> list[int]:
    """The reference layout (each label n/6 times, strongest support first) shuffled by Random(seed + 1701)."""
    labels = [label for label in LABEL_SCORE for _ in range(n // 6)]
    random.Random(seed + 1701).shuffle(labels)
    return [LABEL_SCORE[label] for label in labels]


def config(condition: str, seed: int, protocol=REFERENCE, **overrides) -> TrialSetup:
    return TrialSetup(trial_id=f"t{seed}{condition}", model_name="scripted/imitate", topic=get_topic("ai_labels"),
                       condition=condition, seed=seed, protocol=protocol, **overrides)


@pytest.mark.parametrize("seed", [101, 211, 307, 419])
def test_initial_stances_follow_python_random_with_offset_1701(seed):
    model = prepare_trial(config("likes", seed))
    expected = reference_stances(12, seed)
    assert [a.agent_id for a in model.honest] == [f"a{i:02d}" for i in range(12)]
    assert [a.initial_stance for a in model.honest] == expected
    assert [a.initial_confidence for a in model.honest] == [0.70] * 12
    assert sorted(expected) == [-3, -3, -2, -2, -1, -1, 1, 1, 2, 2, 3, 3]


def test_the_four_seeds_give_four_different_assignments_and_pvsst_differs():
    assignments = {seed: tuple(reference_stances(12, seed)) for seed in (101, 211, 307, 419)}
    assert len(set(assignments.values())) == 4
    pvsst = prepare_trial(config("likes", 101, protocol=protocol_from_preset("pvsst")))
    assert tuple(a.initial_stance for a in pvsst.honest) != assignments[101]


def test_personas_cycle_through_the_table_in_order():
    table = load_persona_table()
    model = prepare_trial(config("likes", 101, n_agents=30))
    expected = [table.loc[i % len(table), "persona_id"] for i in range(30)]
    assert [a.persona["persona_id"] for a in model.honest] == expected


@pytest.mark.parametrize("condition, ids", [("single_source", ["c2000"]),
                                            ("distributed_sources", ["c3000", "c3001", "c3002", "c3003"])])
def test_attacker_accounts_ids_personas_and_start(condition, ids):
    model = prepare_trial(config(condition, 211))  # seed 211 pushes oppose
    assert [a.agent_id for a in model.adversaries] == ids
    assert [a.ordinal for a in model.adversaries] == list(range(12, 12 + len(ids)))
    assert [a.initial_stance for a in model.adversaries] == [-3] * len(ids)
    assert [a.initial_confidence for a in model.adversaries] == [0.85] * len(ids)
    table = load_persona_table("sim/materials/pvsst/adversary_personas.csv")
    assert [a.persona["persona_id"] for a in model.adversaries] == [table.loc[j % 5, "persona_id"]
                                                                  for j in range(len(ids))]


def test_reference_stances_need_a_multiple_of_six():
    with pytest.raises(InputError) as err:
        config("likes", 101, n_agents=8)
    assert err.value.field == "n_agents"


def expected_vote_samples(authors: list[str], voters: list[str], k: int, seed: int, round: int) -> list[list[str]]:
    rng = random.Random(seed + 9001 + round)
    out = []
    for voter in voters:
        eligible = [i for i, author in enumerate(authors) if author != voter]
        out.append([authors[i] for i in rng.sample(eligible, min(k, len(eligible)))])
    return out


@pytest.mark.parametrize("condition", ["likes", "distributed_sources"])
def test_vote_samples_follow_python_random_with_offset_9001(condition):
    result = scripted_trial(condition, seed=307, n_rounds=3, protocol=REFERENCE)
    authors = result.agents["agent_id"].tolist()  # account order: honest, then attackers
    voters = [a for a in authors if a.startswith("a")]
    for round in range(3):
        votes = result.votes[result.votes["round"] == round]
        observed = [votes.loc[votes["voter_id"] == v, "target_agent_id"].tolist() for v in voters]
        assert observed == expected_vote_samples(authors, voters, 5, 307, round)
    # attackers are eligible targets but never vote
    assert result.votes["target_agent_id"].str.startswith("c").any() == (condition != "likes")
    assert not result.votes["voter_id"].str.startswith("c").any()


def test_feed_is_likes_ranked_with_the_rotated_attacker_slot():
    seed = 419
    result = scripted_trial("distributed_sources", seed=seed, n_rounds=3, protocol=REFERENCE)
    posts, exposures = result.posts, result.exposures
    attackers = sorted(a for a in result.agents["agent_id"] if a.startswith("c"))
    for round in (1, 2):
        previous = posts[posts["round"] == round - 1]
        # likes of each previous-round post, counted from this round's vote table
        votes = result.votes[result.votes["round"] == round - 1]
        likes = votes[votes["value"] > 0].groupby("target_agent_id").size()
        for viewer in [a for a in result.agents["agent_id"] if a.startswith("a")]:
            organic = sorted((p for p in previous["agent_id"] if p.startswith("a") and p != viewer),
                             key=lambda a: (-int(likes.get(a, 0)), a))[:4]
            slot = attackers[(int(viewer[1:]) + round + seed) % len(attackers)]
            shown = exposures[(exposures["round"] == round) & (exposures["viewer_id"] == viewer)]
            assert shown.sort_values("position")["shown_agent_id"].tolist() == organic + [slot]
    assert int(exposures["is_adversarial"].sum()) == 12 * 2


def reference_similarity(texts: list[str]) -> float:
    """The reference code's formula, written out: dense cosine matrix, (sum - n) / (n (n - 1))."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    if len(texts) < 2:
        return 0.0
    try:
        matrix = TfidfVectorizer(stop_words="english").fit_transform(texts)
    except ValueError:
        return 0.0
    n = len(texts)
    return float((cosine_similarity(matrix).sum() - n) / (n * (n - 1)))


@pytest.mark.parametrize("texts", [
    ["labels protect users", "labels protect creators", "feeds help"],
    ["labels protect users", "labels protect", "the of and"],  # a post without a content word
    ["only one post"],
    ["the", "of and"],  # no vocabulary at all
])
def test_similarity_edge_cases_reference_setting_equals_the_reference_formula(texts):
    from pvsst.analysis.text.lexical import pairwise_tfidf_similarity

    assert pairwise_tfidf_similarity(texts, edge_cases="reference") == pytest.approx(reference_similarity(texts),
                                                                                    abs=1e-12)


def test_similarity_edge_cases_follow_the_reference_code_when_asked():
    from pvsst.analysis.text.lexical import pairwise_tfidf_similarity

    with_empty = ["labels protect users", "labels protect", "the of and"]
    assert pairwise_tfidf_similarity(with_empty) > pairwise_tfidf_similarity(with_empty, edge_cases="reference")
    assert pairwise_tfidf_similarity(["one"], edge_cases="reference") == 0.0
    assert pairwise_tfidf_similarity(["one"]) != pairwise_tfidf_similarity(["one"])  # nan


def test_a_pvsst_block_makes_the_reference_606_calls_with_the_reference_seeds():
    # The reference code makes 606 requests for one block (12 agents x 6 rounds, the four arms).
    accounts = {"control": 12, "likes": 12, "single_source": 13, "distributed_sources": 16}
    total = 0
    for condition, n_accounts in accounts.items():
        result = scripted_trial(condition, seed=101, protocol=REFERENCE)
        expected = sorted([101 * 100000 + r * 1000 + 500 + i for r in range(6) for i in range(n_accounts)]
                          + [101 * 100000 + r * 1000 + 1000 + i for r in range(6) for i in range(12)])
        assert sorted(result.llm_calls["request_seed"]) == expected
        total += len(result.llm_calls)
    assert total == 606
