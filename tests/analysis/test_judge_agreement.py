"""Stance-judge agreement: two scripted judges with a known pattern of disagreement give the weighted
kappa computed here from the confusion matrix by Cohen's (1968) formula, and the lexicon judge reads
the planted providers' posts back as the stance reported with them.

Judges: 140 posts, 20 at each of the seven stance levels. The first judge returns the level itself;
the second moves every 4th post one level toward neutral (a neutral post toward support) and flips the
side of every 10th post that the first rule left alone, so the raw agreement is known by counting.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from judge_helpers import independent_kappa

from pvsst.analysis.consistency.judge_agreement import compare_judges, judge_agreement
from pvsst.core.errors import InputError
from pvsst.sim.judges.lexicon import LexiconJudge
from pvsst.sim.judges.stance_judge import StanceJudge, judged_stances
from pvsst.sim.stance import LABEL_TO_STANCE, STANCE_LABELS
from pvsst.sim.topics import get_topic

TRUE = np.repeat(np.arange(3, -4, -1), 20)  # 140 posts
POSTS = pd.DataFrame({"trial_id": "t", "round": 0, "agent_id": [f"a{i:03d}" for i in range(140)],
                      "text": [f"post {i}" for i in range(140)]})


def second_opinion(index: int, level: int) -> int:
    if index % 4 == 0:
        return level - int(np.sign(level)) if level else 1
    if index % 10 == 0:
        return -level
    return level


class ScriptedJudge:
    """Returns a fixed score per post, looked up by the post text."""

    def __init__(self, name: str, scores: dict[str, int]):
        self.name, self.scores = name, scores

    def judge(self, texts, topic):
        return [STANCE_LABELS[self.scores[text]] for text in texts]


class _MaybeJudge:
    name = "maybe"

    def judge(self, texts, topic):
        return ["maybe"] * len(texts)


def test_two_scripted_judges_give_the_kappa_of_the_formula():
    second = np.array([second_opinion(i, level) for i, level in enumerate(TRUE)])
    first_judge = ScriptedJudge("first", dict(zip(POSTS["text"], TRUE.tolist())))
    second_judge = ScriptedJudge("second", dict(zip(POSTS["text"], second.tolist())))
    assert isinstance(first_judge, StanceJudge)
    topic = get_topic("ai_labels")
    result = compare_judges(judged_stances(first_judge, POSTS, topic), judged_stances(second_judge, POSTS, topic))
    # 35 posts (every 4th) moved a level; of the other 105, every 10th not also a 4th (i % 10 == 0 and
    # i % 4 != 0: 7 of 140) flipped side, 1 of them (level 0) unchanged by the flip: 35 + 6 disagree.
    flipped = sum(1 for i in range(140) if i % 4 and i % 10 == 0 and TRUE[i] != 0)
    assert flipped == 6
    assert result.n == 140
    assert result.raw_agreement == pytest.approx((140 - 35 - 6) / 140, abs=1e-15)
    assert result.kappa_linear == pytest.approx(independent_kappa(TRUE, second, 1), abs=1e-12)
    assert result.kappa_quadratic == pytest.approx(independent_kappa(TRUE, second, 2), abs=1e-12)
    assert 0.5 < result.kappa_linear < result.kappa_quadratic < 1.0
    assert result.confusion.sum() == 140 and np.trace(result.confusion) == 99


def test_kappa_of_a_hand_sized_table():
    # Two judges, four posts: (+1,+1), (-1,-1), (+1,-1), (-1,+1): O = [[.25,.25],[.25,.25]] on the
    # levels +1/-1, E the same, so linear and quadratic kappa are exactly 0; identical judges give 1.
    assert judge_agreement([1, -1, 1, -1], [1, -1, -1, 1]).kappa_quadratic == pytest.approx(0.0, abs=1e-15)
    assert judge_agreement([3, 0, -3], [3, 0, -3]).kappa_linear == pytest.approx(1.0)


def test_bad_judge_output_and_scores_are_input_errors():
    with pytest.raises(InputError, match="not a stance label"):
        judged_stances(_MaybeJudge(), POSTS.head(2), get_topic("ai_labels"))
    with pytest.raises(InputError, match="not a stance score"):
        judge_agreement([4], [3])


def test_lexicon_judge_reads_the_planted_writers_posts_back():
    """Posts the null trial agent writes at every stance level (7 levels x 5 seeds) are judged exactly."""
    from pvsst.sim.llm.providers.planted import NullTrialAgent

    topic = get_topic("ai_labels")
    agent = NullTrialAgent()
    for level in range(-3, 4):
        for seed in range(5):
            post = agent._post(f"TOPIC: {topic.question}\nYOUR STANCE: {STANCE_LABELS[level]}\nYOUR CONFIDENCE: 0.7",
                               np.random.default_rng(seed))
            assert LABEL_TO_STANCE[LexiconJudge().judge([post["post"]], topic)[0]] == level
