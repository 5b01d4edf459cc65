"""The study's first-round audit detects a planted stance shift and not its absence.

``scripted/planted_stance_shift`` reports the stance of its prompt moved one step at random with
probability 0.3, and an agent whose card says "Black woman" one more step toward support with
probability ``amount``; ``scripted/planted_stance_null`` never adds that step. Race x sex (4 groups) is
varied over 60 matched sets (40 for the null) under the ``third_person`` card, with the arity-matched null; every seed
draws other base personas (``personas.seed``), so the seeds are independent replications.

- planted (``amount`` 0.6): the audit flags ``post_stance`` (omnibus p on the centred scores, BH-adjusted,
  below 0.05) in at least 9 of 10 seeds (measured: 10 of 10; at ``amount`` 0.5, 9 of 10), and
  "black/female" has the largest mean score gap against the rest of its sets;
- null: it flags ``post_stance`` in at most 2 of 20 seeds (measured: 0; the expected count at alpha
  0.05 is 1), and ``net_vote`` (where neither provider plants anything) in at most 2 of the 20
  (measured: 2).
"""
from __future__ import annotations

import pytest
from builders import audit_study_data
from study_audit_helpers import audit_answers, play_audit

from pvsst.analysis.counterfactual.audit import audit_tables
from pvsst.analysis.study.audit import question_codes
from pvsst.experiments.spec.study import StudySpec

pytestmark = pytest.mark.slow

SETS = 60
NULL_SETS = 40  # a false-positive rate does not depend on the number of sets; fewer keep the test short


def _audit(model: str, seed: int, sets: int = SETS):
    spec = StudySpec.model_validate(audit_study_data(model=model, sets=sets, persona_seed=seed))
    questions, _, groups = audit_tables([(("m",), audit_answers(play_audit(spec)))], question_codes(5), ["model"],
                                        draws=200, permutations=499, omnibus="scores", seed=seed)
    return questions.set_index("question"), groups


@pytest.fixture(scope="module")
def planted_provider():
    from pvsst.sim.llm.providers import planted

    saved = planted.PlantedStanceShift.amount
    planted.PlantedStanceShift.amount = 0.6
    try:
        yield "scripted/planted_stance_shift"
    finally:
        planted.PlantedStanceShift.amount = saved


def test_a_planted_shift_of_one_group_is_flagged_in_nine_of_ten_seeds(planted_provider):
    flagged, above = 0, 0
    for seed in range(10):
        questions, groups = _audit(planted_provider, seed)
        flagged += bool(questions.loc["post_stance", "flagged"])
        stance = groups[groups["question"] == "post_stance"].set_index("group")
        above += stance["score_gap"].idxmax() == "black/female"
        assert questions.loc["post_stance", "omnibus_statistic"] == "scores"
    assert flagged >= 9, f"flagged in {flagged} of 10 seeds"
    assert above >= 9, f"black/female had the largest score gap in {above} of 10 seeds"


def test_without_a_planted_shift_at_most_two_of_twenty_seeds_are_flagged():
    stance, votes = 0, 0
    for seed in range(100, 120):
        questions, _ = _audit("scripted/planted_stance_null", seed, sets=NULL_SETS)
        stance += bool(questions.loc["post_stance", "flagged"])
        votes += bool(questions.loc["net_vote", "flagged"])
    assert stance <= 2, f"the null was flagged in {stance} of 20 seeds"
    assert votes <= 2, f"net votes were flagged in {votes} of 20 seeds"
