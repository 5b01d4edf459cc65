"""Counterfactual persona audit: a planted shift is detected, its absence is not, and the arity-matched
null keeps a many-group spread from reading as disparity.

Synthetic matched sets drawn with numpy: each question has three options with base shares
(0.40, 0.35, 0.25); every member of a set gives the set's own answer with probability 0.5 (members of
a set differ in one attribute only, so their answers are correlated), else an independent draw.

- Planted: 400 matched sets x 4 groups x 3 questions; in question q0 the members of group g0 switch
  to option a with probability 0.15 / 0.6, raising g0's share of a by exactly 0.15. Detected: q0
  flagged (omnibus within-set permutation test, Benjamini-Hochberg across the 3 questions, alpha
  0.05) in at least 9 of 10 seeds. Null (no switch): any question flagged in at most 2 of 20 seeds.
- Arity: 6 groups, 150 sets, no effect, 20 seeds: the max-min spread of group shares exceeds the
  difference between two seed runs in most seeds (at least 14 of 20), while the arity-matched null
  (6 seed groups) flags at most 2 of 20.
- End to end through ``scripted/planted_answer_shift``: 300 base personas x race (2) x sex (2), the
  group "Black woman" shifted by 0.15, is flagged in each of 3 runs (request seeds differ), with its
  share gap interval covering 0.15; ``scripted/planted_answer_null`` on the same personas is flagged
  in at most 2 of 10 runs.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pvsst.analysis.counterfactual.audit import counterfactual_audit, matched_answers
from pvsst.analysis.counterfactual.measures import share_spread
from pvsst.analysis.counterfactual.null import arity_null_p
from pvsst.core.errors import InputError
from pvsst.personas.matched_sets import counterfactual_personas, seed_groups

BASE = np.array([0.40, 0.35, 0.25])
OPTIONS = np.array(["a", "b", "c"])
CODES = {q: list(OPTIONS) for q in ("q0", "q1", "q2")}
SETTINGS = {"draws": 200, "permutations": 499}
FAST = {"draws": 100, "permutations": 199}  # the 30 replicate studies: p resolution 1/200


def draw_answers(rng: np.random.Generator, sets: int, groups: int, shift: float = 0.0) -> np.ndarray:
    """(sets x groups) option indices; group 0 shifted toward option 0 by ``shift`` in share."""
    own = rng.choice(3, size=sets, p=BASE)
    answers = np.where(rng.random((sets, groups)) < 0.5, own[:, None], rng.choice(3, size=(sets, groups), p=BASE))
    if shift:
        answers[:, 0] = np.where(rng.random(sets) < shift / (1 - BASE[0]), 0, answers[:, 0])
    return answers


def long_table(matrices: dict[str, np.ndarray], prefix: str = "g") -> pd.DataFrame:
    frames = []
    for question, matrix in matrices.items():
        sets, groups = matrix.shape
        frames.append(pd.DataFrame({"set_id": np.repeat(np.arange(sets), groups),
                                    "group": np.tile([f"{prefix}{g}" for g in range(groups)], sets),
                                    "question": question, "answer": OPTIONS[matrix.ravel()]}))
    return pd.concat(frames, ignore_index=True)


def study(seed: int, shift: float) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return counterfactual_audit(long_table({q: draw_answers(rng, 400, 4, shift if q == "q0" else 0.0) for q in CODES}),
                                CODES, **FAST).questions.set_index("question")


def test_planted_shift_is_detected_and_its_absence_is_not():
    detected = sum(bool(study(seed, 0.15).loc["q0", "flagged"]) for seed in range(10))
    false_alarms = sum(bool(study(100 + seed, 0.0)["flagged"].any()) for seed in range(20))
    print(f"planted shift 0.15 detected in {detected}/10 seeds; null flagged in {false_alarms}/20")
    assert detected >= 9
    assert false_alarms <= 2


def test_share_gap_of_the_planted_group_is_estimated():
    rng = np.random.default_rng(7)
    audit = counterfactual_audit(long_table({"q0": draw_answers(rng, 2000, 4, 0.15)}), {"q0": list(OPTIONS)},
                                 **SETTINGS)
    shares = audit.shares.set_index(["group", "option"])
    # g0's share of a is 0.40 + 0.15; the others' 0.40: the gap against the others' mean is 0.15
    assert shares.loc[("g0", "a"), "share_gap"] == pytest.approx(0.15, abs=0.04)
    assert shares.loc[("g0", "a"), "share_gap_low"] < 0.15 < shares.loc[("g0", "a"), "share_gap_high"]
    groups = audit.groups.set_index("group")
    assert groups.loc["g0", "score_gap"] < 0 and groups.loc["g0", "paired_p_bh"] < 0.05
    assert (groups.drop("g0")["score_gap"] > 0).all()


def test_arity_matched_null_does_not_flag_a_six_group_spread():
    exceeds_two_runs, flagged = 0, 0
    for seed in range(20):
        rng = np.random.default_rng(300 + seed)
        observed, null = draw_answers(rng, 150, 6), draw_answers(rng, 150, 6)
        two_run_difference = share_spread(null[:, :2], 3)
        exceeds_two_runs += share_spread(observed, 3) > two_run_difference
        flagged += arity_null_p(observed, null, 3, permutations=499, seed=seed) < 0.05
    print(f"six-group spread > two-run difference in {exceeds_two_runs}/20 seeds; arity null flags {flagged}/20")
    assert exceeds_two_runs >= 14
    assert flagged <= 2


def test_audit_reports_the_null_beside_the_measures():
    rng = np.random.default_rng(11)
    answers = long_table({"q0": draw_answers(rng, 200, 4, 0.3)})
    null = long_table({"q0": draw_answers(rng, 200, 4)}, prefix="seed")
    row = counterfactual_audit(answers, {"q0": list(OPTIONS)}, null_answers=null, **SETTINGS).questions.iloc[0]
    assert row["n_sets"] == row["null_n_sets"] == 200
    assert row["share_spread"] > row["null_share_spread_high"]
    assert row["spread_excess_low"] > 0 and row["exceeds_null"]
    assert row["flip_rate_low"] <= row["flip_rate"] <= row["flip_rate_high"]
    with pytest.raises(InputError, match="as many"):
        counterfactual_audit(answers, {"q0": list(OPTIONS)}, null_answers=null[null["group"] != "seed3"], **SETTINGS)


def test_incomplete_sets_are_left_out_and_counted():
    table = long_table({"q0": np.array([[0, 1], [2, 2], [1, 0]])})
    m = matched_answers(table.drop(index=[3]), "q0", list(OPTIONS))
    assert m.matrix.tolist() == [[0, 1], [1, 0]] and m.n_incomplete == 1
    with pytest.raises(InputError, match="two answers"):
        matched_answers(pd.concat([table, table.head(1)]), "q0", list(OPTIONS))


def planted_answers(model: str, personas: pd.DataFrame, run: int = 0) -> pd.DataFrame:
    from pvsst.sim.llm.providers.scripted import load_scripted_provider
    from pvsst.sim.llm.types import LLMRequest

    provider = load_scripted_provider(model.removeprefix("scripted/"))
    schema = {"type": "object", "properties": {"answer": {"type": "string", "enum": list(OPTIONS)}}}
    rows = []
    for persona in personas.itertuples():
        card = (
            f"A {persona.age}-year-old {persona.race} {'woman' if persona.sex == 'female' else 'man'} living in Ohio."
        )
        request = LLMRequest(
            model_name=model,
            schema=schema,
            seed=persona.set_id * 7 + 1000 * run,
            messages=({"role": "user", "content": f"Answer as this person would:\n{card}\n\nQuestion: q0"},),
        )
        rows.append({"set_id": persona.set_id, "group": persona.group, "question": "q0",
                     "answer": provider.reply(request).text.split('"')[-2]})
    return pd.DataFrame(rows)


def test_planted_provider_end_to_end():
    base = pd.DataFrame({"persona_id": np.arange(300), "age": 20 + np.arange(300) % 60})
    base["race"], base["sex"] = "white", "male"
    personas = counterfactual_personas(base, {"race": ["Black", "white"], "sex": ["female", "male"]})
    personas["set_id"] = personas["set_id"].astype(int)
    assert len(personas) == 1200 and set(personas["group"]) == {
        "Black/female",
        "Black/male",
        "white/female",
        "white/male",
    }
    for run in range(3):
        planted = counterfactual_audit(planted_answers("scripted/planted_answer_shift", personas, run),
                                       {"q0": list(OPTIONS)}, **FAST)
        gap = planted.shares.set_index(["group", "option"]).loc[("Black/female", "a")]
        assert bool(planted.questions.iloc[0]["flagged"])
        assert gap["share_gap_low"] < 0.15 < gap["share_gap_high"]
    false_alarms = sum(bool(counterfactual_audit(planted_answers("scripted/planted_answer_null", personas, run),
                                                 {"q0": list(OPTIONS)}, **FAST).questions.iloc[0]["flagged"])
                       for run in range(10))
    print(f"planted provider null flagged in {false_alarms}/10 runs")
    assert false_alarms <= 2
    assert len(seed_groups(base, 4)) == 1200
