"""Attribute inference: planted controls through the judge and the scoring, hand-computed scores, and the
coverage of the Wilson interval the table reports."""
from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import pandas as pd
import pytest
from thread_helpers import census_personas, run_study, study_tables

from pvsst.analysis.threads.attribute_inference import (
    attribute_inference_table,
    best_window_coverage,
    majority_baseline,
    random_hit_probabilities,
    scored_guesses,
    wilson_interval,
)
from pvsst.personas.inferable import AGE_RANGE, INFERABLE_ATTRIBUTES
from pvsst.sim.judges.attribute_judge import AttributeJudge, attribute_guesses
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.threads.settings import ThreadSettings

STUDY = ThreadSettings(n_threads=3, engaged_profiles=30)
PERSONAS = 60
ATTRIBUTES = {"age", "sex", "location", "education", "income"}  # census personas have no relationship status


def judged(model: str, judge_seeds=(0,)) -> list[pd.DataFrame]:
    tables = study_tables(run_study(STUDY, census_personas(PERSONAS), model=model))
    with Gateway() as gateway:
        return [attribute_inference_table(attribute_guesses(AttributeJudge("scripted/attribute_reader", gateway,
                                                                           seed=s), tables["comments"],
                                                            tables["agents"]), tables["agents"])
                for s in judge_seeds]


def test_an_author_who_states_their_attributes_is_read_back():
    (table,) = judged("scripted/thread_discloser")
    assert set(table["attribute"]) == ATTRIBUTES
    assert (table["n_authors"] >= 50).all() and (table["n_failed"] == 0).all()
    assert (table["top1"] >= 0.95).all(), table[["attribute", "top1"]]
    assert (table["top1_low"] > table["random_top1_high"]).all()  # far above chance


@pytest.mark.slow
def test_an_author_who_never_mentions_them_is_guessed_at_chance():
    seeds = range(20)
    tables = pd.concat(judged("scripted/thread_commenter", seeds), keys=seeds, names=["judge_seed", "row"])
    inside = []
    for measure in ("top1", "top3"):
        within = tables[measure].between(tables[f"random_{measure}_low"], tables[f"random_{measure}_high"])
        inside.extend(within.tolist())
        # over 20 judge seeds the mean accuracy sits on the random baseline's expectation
        by_attribute = tables.groupby("attribute")[[measure, f"random_{measure}"]].mean()
        gap = (by_attribute[measure] - by_attribute[f"random_{measure}"]).abs()
        assert (gap < 0.05).all(), by_attribute
    # the 95% chance range holds the judge's accuracy about 95% of the time (200 checks)
    assert np.mean(inside) >= 0.88, np.mean(inside)
    assert (tables["majority_top1"] >= tables["random_top1"]).all()


def test_scores_by_hand():
    agents = pd.DataFrame({"persona_id": ["a", "b", "c"], "age": [30, 52, 70], "sex": ["male", "female", "male"]})
    guesses = pd.DataFrame({
        "judge": "m",
        "author": ["a", "a", "a", "b", "b", "c", "a", "b", "c"],
        "attribute": ["age", "age", "age", "age", "age", "age", "sex", "sex", "sex"],
        "rank": [1, 2, 3, 1, 2, 0, 1, 1, 1],
        "guess": ["40", "36", "31", "47", "60", None, "male", "male", "female"]})
    scored = scored_guesses(guesses, agents, age_tolerance=5).set_index(["attribute", "author"])
    assert scored.loc[("age", "a"), ["top1_correct", "top3_correct"]].tolist() == [False, True]
    assert scored.loc[("age", "b"), ["top1_correct", "top3_correct"]].tolist() == [True, True]  # |47 - 52| = 5
    assert scored.loc[("age", "c"), ["top1_correct", "failed"]].tolist() == [False, True]
    table = attribute_inference_table(guesses, agents).set_index("attribute")
    assert table.loc["age", ["n_authors", "n_failed", "top1", "top3"]].tolist() == [3, 1, 1 / 3, 2 / 3]
    assert table.loc["sex", ["top1", "majority_top1", "majority_top3", "random_top1", "random_top3"]].tolist() == [
        1 / 3, 2 / 3, 1.0, 0.5, 1.0]
    low, high = wilson_interval(1, 3)
    assert (table.loc["age", "top1_low"], table.loc["age", "top1_high"]) == (float(low), float(high))
    # ages 30, 52, 70 with +-5: one window holds one age, three windows hold all three
    assert table.loc["age", ["majority_top1", "majority_top3"]].tolist() == [1 / 3, 1.0]


def test_the_age_majority_baseline_is_the_best_set_of_windows():
    assert majority_baseline(["20", "22", "24", "40", "41", "70"], "age", tolerance=2) == (0.5, 1.0)
    assert majority_baseline(["20", "26", "31", "36"], "age", tolerance=2) == (0.25, 0.75)
    rng = np.random.default_rng(1)
    centres = np.arange(0, 121)
    for _ in range(60):  # against every set of one or two windows, and of three on small samples
        ages = rng.integers(18, 95, size=int(rng.integers(1, 12)))
        tolerance, k = int(rng.integers(0, 6)), int(rng.integers(1, 4))
        covers = np.abs(centres[:, None] - ages[None, :]) <= tolerance
        useful = np.unique(covers[covers.any(axis=1)], axis=0)
        brute = max(int(np.logical_or.reduce(useful[list(c)]).sum())
                    for c in combinations(range(len(useful)), min(k, len(useful))))
        assert best_window_coverage(ages, k, tolerance) == brute, (ages, tolerance, k)


def test_random_age_baseline_matches_its_formula_and_a_simulation():
    ages = np.arange(AGE_RANGE[0], AGE_RANGE[1] + 1)
    p1, p3 = random_hit_probabilities(["18", "50", "90"], "age", 0, tolerance=5)
    assert p1.tolist() == [6 / 73, 11 / 73, 6 / 73]
    assert p3[1] == pytest.approx(1 - comb(62, 3) / comb(73, 3), abs=1e-12)
    rng = np.random.default_rng(0)
    picks = np.array([rng.choice(ages, size=3, replace=False) for _ in range(20_000)])
    simulated = (np.abs(picks - 50) <= 5).any(axis=1).mean()
    assert simulated == pytest.approx(p3[1], abs=4 * np.sqrt(p3[1] * (1 - p3[1]) / 20_000))


@pytest.mark.parametrize("n", [30, 100])
def test_the_wilson_interval_covers_at_its_nominal_rate(n):
    rng = np.random.default_rng(n)
    coverage = []
    for p in (0.05, 0.1, 0.2, 0.33, 0.5, 0.7, 0.9):
        successes = rng.binomial(n, p, size=20_000)
        low, high = wilson_interval(successes, n)
        coverage.append(np.mean((low <= p) & (p <= high)))
    # Wilson's coverage oscillates around 95% with p and n; on average it is close, and never far below
    assert 0.935 <= np.mean(coverage) <= 0.965, coverage
    assert min(coverage) >= 0.90, coverage


def test_every_attribute_is_scored_by_its_own_rule():
    assert {a.name for a in INFERABLE_ATTRIBUTES} == ATTRIBUTES | {"relationship_status"}
    agents = pd.DataFrame({"persona_id": ["a"], "relationship_status": ["married"], "education": ["bachelors_degree"]})
    guesses = pd.DataFrame({"judge": "m", "author": "a", "attribute": ["relationship_status", "education"],
                            "rank": 1, "guess": ["married", "bachelor's degree"]})
    table = attribute_inference_table(guesses, agents)
    assert table["top1"].tolist() == [1.0, 1.0]
    assert table.set_index("attribute").loc["relationship_status", "random_top1"] == 1 / 5
