"""Matched sets built from base personas (race x sex: 4 members per set) and found in a persona table."""
from __future__ import annotations

import pandas as pd
import pytest

from pvsst.core.errors import InputError
from pvsst.personas.matched_sets import counterfactual_personas, matched_sets, seed_groups


def test_counterfactual_personas_differ_only_in_the_varied_attributes():
    base = pd.DataFrame({"persona_id": ["p1", "p2", "p3"], "race": ["white", "asian", "black"],
                         "sex": ["male", "female", "male"], "age": [30, 45, 60], "party": ["D", "R", "I"]})
    sets = counterfactual_personas(base, {"race": ["black", "white"], "sex": ["female", "male"]})
    assert len(sets) == 12 and sets["persona_id"].is_unique
    for set_id, members in sets.groupby("set_id"):
        assert members["group"].tolist() == ["black/female", "black/male", "white/female", "white/male"]
        kept = base.set_index("persona_id").loc[set_id, ["age", "party"]]
        assert (members[["age", "party"]] == kept.to_numpy()).all().all()
    found = matched_sets(sets.drop(columns=["set_id", "group"]), ["race", "sex"])
    assert found.groupby("set_id").size().tolist() == [4, 4, 4]
    assert set(found["set_id"]) == {"set1", "set2", "set3"}


def test_matched_sets_leave_out_incomplete_and_ambiguous_sets():
    people = pd.DataFrame({"persona_id": list("abcdefg"),
                           "sex": ["male", "female", "male", "female", "female", "male", "female"],
                           "age": [30, 30, 40, 40, 40, 50, 50], "seed": [1, 1, 1, 1, 1, 1, 2]})
    found = matched_sets(people, ["sex"])
    # age 40 has two women (ambiguous); age 50 differs in seed: only a/b form a set
    assert found["persona_id"].tolist() == ["a", "b"]
    with pytest.raises(InputError, match="no such persona attribute"):
        matched_sets(people, ["race"])
    with pytest.raises(InputError, match="at least 2 distinct levels"):
        counterfactual_personas(people, {"sex": ["female"]})


def test_seed_groups_are_the_arity_matched_null():
    base = pd.DataFrame({"persona_id": ["p1", "p2"], "sex": ["male", "female"]})
    null = seed_groups(base, 6)
    assert len(null) == 12 and null.groupby("set_id")["replicate"].apply(list).tolist() == [list(range(6))] * 2
    assert (null.groupby("set_id")["sex"].nunique() == 1).all()
