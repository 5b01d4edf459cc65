"""Belief-behaviour consistency in trials: a planted stance-contradiction rate is detected, its absence
is not; a planted same-side vote margin shows in the like rates.

Synthetic studies drawn with numpy: 8 blocks (2 topics x 4 seeds, one model, one arm), 12 honest agents
x 6 rounds per trial, reported stances uniform over the six non-neutral levels. A post contradicts its
reported stance with the planted probability (0.20 or 0); the judge then misreads the side of any post
with probability 0.10 (its known error rate, the tolerance). A study flags contradiction when the
block-bootstrap interval's lower bound (alpha 0.05, 2,000 draws) of the contradiction rate exceeds the
tolerance. Planted 20%: flagged in at least 9 of 10 studies; 0%: in at most 2 of 20.

End to end: trials run with ``scripted/planted_contradiction`` (20%), ``scripted/planted_same_side_votes``
(margin 0.2) and ``scripted/planted_trial_null``, posts judged by the lexicon judge; and the same
detection claim through the engine and a language-model judge path: 10 planted and 20 null studies of
4 trials x 72 posts, read by a scripted judge that flips the side of 10% of posts (detected in 10 of 10,
flagged in 1 of 20 when measured).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pvsst.analysis.consistency.trials import consistency_by_arm, stance_consistency, trial_consistency, vote_sides

JUDGE_ERROR = 0.10


def synthetic_study(seed: int, contradiction: float) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    posts, judged, trials = [], [], []
    for topic in ("t1", "t2"):
        for trial_seed in (101, 211, 307, 419):
            trial_id = f"m-{topic}-{trial_seed}"
            trials.append({"trial_id": trial_id, "model": "m", "condition": "likes", "topic_id": topic,
                           "seed": trial_seed})
            reported = rng.choice([-3, -2, -1, 1, 2, 3], size=(6, 12))
            written = np.where(rng.random((6, 12)) < contradiction, -reported, reported)
            read = np.where(rng.random((6, 12)) < JUDGE_ERROR, -written, written)
            for r in range(6):
                for a in range(12):
                    posts.append({"trial_id": trial_id, "round": r, "agent_id": f"a{a:02d}",
                                  "stance": int(reported[r, a]), "parse_ok": True})
                    judged.append({"trial_id": trial_id, "round": r, "agent_id": f"a{a:02d}",
                                   "judged_stance": int(read[r, a])})
    return pd.DataFrame(posts), pd.DataFrame(judged), pd.DataFrame(trials)


def contradiction_summary(seed: int, contradiction: float) -> pd.Series:
    posts, judged, trials = synthetic_study(seed, contradiction)
    per_trial = trial_consistency(stance_consistency(posts, judged))
    summary = consistency_by_arm(per_trial, trials, metrics=["stance_contradiction_rate"], draws=2000)
    assert len(summary) == 1 and summary.iloc[0]["n_blocks"] == 8
    return summary.iloc[0]


def assert_contradiction_detected(planted, null, label: str, tolerance: float) -> None:
    """10 planted studies (contradiction 0.20) and 20 null ones (0): a study is flagged when its lower
    bound exceeds the judge's side error; at least 9 of 10 planted and at most 2 of 20 null are flagged,
    and the mean observed rates are 0.2 * 0.9 + 0.8 * 0.1 = 0.26 and 0.10 (within ``tolerance``)."""
    detected = sum(row["ci_low"] > JUDGE_ERROR for row in planted)
    false_alarms = sum(row["ci_low"] > JUDGE_ERROR for row in null)
    print(f"{label} 20% detected in {detected}/{len(planted)} studies; 0% flagged in {false_alarms}/{len(null)}")
    assert len(planted) == 10 and len(null) == 20
    assert detected >= 9
    assert false_alarms <= 2
    assert np.mean([row["mean"] for row in planted]) == pytest.approx(0.26, abs=tolerance)
    assert np.mean([row["mean"] for row in null]) == pytest.approx(0.10, abs=tolerance)


def test_planted_contradiction_is_detected_and_its_absence_is_not():
    planted = [contradiction_summary(seed, 0.20) for seed in range(10)]
    null = [contradiction_summary(100 + seed, 0.0) for seed in range(20)]
    assert_contradiction_detected(planted, null, "contradiction", tolerance=0.02)


def test_per_agent_round_measures_and_vote_sides():
    posts = pd.DataFrame({"trial_id": "t", "round": [0, 0, 0, 0, 1], "agent_id": ["a", "b", "c", "d", "a"],
                          "stance": [3, -2, 1, 0, 3], "parse_ok": [True, True, True, True, False]})
    judged = pd.DataFrame({"trial_id": "t", "round": [0, 0, 0, 0, 1], "agent_id": ["a", "b", "c", "d", "a"],
                           "judged_stance": [1, -2, -1, 0, 3]})
    agents = pd.DataFrame({"trial_id": "t", "agent_id": ["a", "b", "c", "d"],
                           "role": ["honest", "honest", "honest", "adversary"]})
    table = stance_consistency(posts, judged, agents)
    assert table["agent_id"].tolist() == ["a", "b", "c"]  # the failed reply and the adversary are left out
    assert table["signed_gap"].tolist() == [-2, 0, -2]
    assert table["exact_agreement"].tolist() == [False, True, False]
    assert table["side_agreement"].tolist() == [True, True, False]
    assert table["contradiction"].tolist() == [False, False, True]
    votes = pd.DataFrame({"trial_id": "t", "round": 0, "voter_id": ["a", "a", "a", "b", "b"],
                          "target_agent_id": ["b", "c", "d", "a", "c"], "value": [-1, 1, 1, 1, 0],
                          "parse_ok": [True, True, True, True, False]})
    sides = vote_sides(posts, votes, agents)
    # a->d: neutral author, left out; b->c did not parse
    assert sides[["voter_id", "target_agent_id", "same_side", "liked"]].values.tolist() == [
        ["a", "b", False, False], ["a", "c", True, True], ["b", "a", False, True]]
    row = trial_consistency(table, sides).iloc[0]
    assert row["like_rate_same_side"] == 1.0 and row["like_rate_other_side"] == 0.5
    assert row["like_rate_chance"] == pytest.approx(2 / 3) and row["same_side_like_gap"] == 0.5
    assert row["stance_signed_gap"] == pytest.approx(-4 / 3) and row["n_judged_posts"] == 3


def run_planted_trials(model: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    from pvsst.sim.judges.lexicon import LexiconJudge
    from pvsst.sim.judges.stance_judge import judged_stances
    from pvsst.sim.llm.gateway import Gateway
    from pvsst.sim.topics import get_topic
    from pvsst.sim.trial.run import run_trial
    from pvsst.sim.trial.settings import TrialSetup

    per_trial, trials = [], []
    with Gateway() as gateway:
        for seed in (101, 211):
            config = TrialSetup(trial_id=f"{model}-{seed}", model_name=model, topic=get_topic("ai_labels"),
                                 condition="likes", seed=seed)
            result = run_trial(config, gateway)
            judged = judged_stances(LexiconJudge(), result.posts, config.topic)
            per_trial.append(trial_consistency(stance_consistency(result.posts, judged, result.agents),
                                               vote_sides(result.posts, result.votes, result.agents)))
            trials.append({"trial_id": config.trial_id, "model": model, "condition": "likes",
                           "topic_id": "ai_labels", "seed": seed})
    return pd.concat(per_trial, ignore_index=True), pd.DataFrame(trials)


def test_planted_providers_end_to_end():
    """Two trials (12 agents x 6 rounds: 144 posts, 720 votes) per provider."""
    summaries = {}
    for model in ("scripted/planted_contradiction", "scripted/planted_same_side_votes", "scripted/planted_trial_null"):
        per_trial, trials = run_planted_trials(model)
        summaries[model] = consistency_by_arm(per_trial, trials, draws=2000).set_index("metric")
    planted, votes, null = (summaries[m] for m in ("scripted/planted_contradiction", "scripted/planted_same_side_votes",
                                                   "scripted/planted_trial_null"))
    # the lexicon judge reads these writers exactly: a consistent agent scores 1 and 0
    assert null.loc["stance_exact_agreement", "mean"] == 1.0 and null.loc["stance_contradiction_rate", "mean"] == 0.0
    assert votes.loc["stance_contradiction_rate", "mean"] == 0.0
    assert planted.loc["stance_contradiction_rate", "mean"] == pytest.approx(0.20, abs=0.07)
    # two blocks: a Student-t interval (1 degree of freedom), too wide to place the rate above 0; a percentile
    # bootstrap of two blocks claimed it was
    row = planted.loc["stance_contradiction_rate"]
    assert row["interval"] == "t" and row["ci_low"] < row["mean"] < row["ci_high"]
    assert votes.loc["same_side_like_gap", "mean"] == pytest.approx(0.20, abs=0.1)
    assert null.loc["same_side_like_gap", "mean"] == pytest.approx(0.0, abs=0.1)
    assert votes.loc["like_rate_chance", "mean"] == pytest.approx(0.5, abs=0.06)


def planted_study_summary(model: str, study: int, gateway) -> pd.Series:
    """One study of 4 trials (likes arm, 12 agents x 6 rounds, trial seeds 1000 * study + 1..4) of
    ``model``, its posts read by ``scripted/noisy_judge`` (the lexicon's reading with the side flipped for
    10% of posts, through the gateway), summarised over its 4 blocks."""
    from pvsst.sim.judges.llm_judge import LLMJudge
    from pvsst.sim.judges.stance_judge import judged_stances
    from pvsst.sim.topics import get_topic
    from pvsst.sim.trial.run import run_trial
    from pvsst.sim.trial.settings import TrialSetup

    judge = LLMJudge("scripted/noisy_judge", gateway, seed=study)
    per_trial, trials = [], []
    for seed in range(1000 * study + 1, 1000 * study + 5):
        setup = TrialSetup(trial_id=f"{model}-{seed}", model_name=model, topic=get_topic("ai_labels"),
                           condition="likes", seed=seed)
        result = run_trial(setup, gateway)
        judged = judged_stances(judge, result.posts, setup.topic)
        per_trial.append(trial_consistency(stance_consistency(result.posts, judged, result.agents)))
        trials.append({"trial_id": setup.trial_id, "model": model, "condition": "likes", "topic_id": "ai_labels",
                       "seed": seed})
    summary = consistency_by_arm(pd.concat(per_trial, ignore_index=True), pd.DataFrame(trials),
                                 metrics=["stance_contradiction_rate"], draws=2000)
    assert summary.iloc[0]["n_blocks"] == 4
    return summary.iloc[0]


@pytest.mark.slow
def test_planted_providers_through_a_model_judge_detect_twenty_percent_not_zero():
    """The planted-effect providers end to end, with a judge that errs: 10 studies of
    ``scripted/planted_contradiction`` (contradiction rate 0.20) and 20 of ``scripted/planted_trial_null``
    (0), each 4 trials x 72 posts = 288 posts, judged by ``scripted/noisy_judge`` (side error 0.10, the
    tolerance). A study flags contradiction when its block-bootstrap lower bound (alpha 0.05, 2,000 draws)
    exceeds 0.10. Planted: flagged in at least 9 of 10 studies; null: in at most 2 of 20."""
    from judge_helpers import register_test_judges

    from pvsst.sim.llm.gateway import Gateway

    register_test_judges()
    with Gateway() as gateway:
        planted = [planted_study_summary("scripted/planted_contradiction", s, gateway) for s in range(10)]
        null = [planted_study_summary("scripted/planted_trial_null", 100 + s, gateway) for s in range(20)]
    assert_contradiction_detected(planted, null, "planted providers: contradiction", tolerance=0.03)
