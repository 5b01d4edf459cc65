"""Design expansion: factors -> trials -> blocks, stable trial ids, push directions, staged run order."""
from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest
from builders import small_study_spec
from reference_paths import PUBLISHED_RESULTS

from pvsst.experiments.spec.design import expand, trial_id
from pvsst.experiments.spec.study import StudySpec, load_spec

SPECS = Path(__file__).resolve().parents[2] / "experiments" / "specs"
PUBLISHED = PUBLISHED_RESULTS
ARMS = ["control", "likes", "single_source", "distributed_sources"]


@pytest.fixture(scope="module")
def confirmatory():
    return expand(load_spec(SPECS / "pvsst_confirmatory.yaml"))


def design_spec(**sections) -> StudySpec:
    """2 models x 2 topics x 3 seeds x 2 arms: enough factors to reorder, stage and block."""
    factors = {"models": ["scripted/imitate", "scripted/echo"], "topics": ["ai_labels", "identity_verification"],
               "seeds": [101, 211, 307], **sections.pop("factors", {})}
    return small_study_spec(factors=factors, **sections)


def test_pvsst_gives_256_trials_in_64_blocks_of_one_trial_per_arm(confirmatory):
    assert len(confirmatory.trials) == 256
    assert len(confirmatory.blocks) == 64
    by_id = {t.trial_id: t for t in confirmatory.trials}
    assert len(by_id) == 256
    for block, ids in confirmatory.blocks.items():
        assert sorted(by_id[i].condition for i in ids) == sorted(ARMS)
        assert {(by_id[i].model_name, by_id[i].topic_id, by_id[i].seed) for i in ids} == {
            (by_id[ids[0]].model_name, by_id[ids[0]].topic_id, by_id[ids[0]].seed)}
        assert all(by_id[i].block_id == block for i in ids)
    assert [t.order for t in confirmatory.trials] == list(range(256))


def test_trial_ids_are_readable_and_fixed(confirmatory):
    first = confirmatory.trials[0]
    assert first.trial_id == "ollama_chat-qwen3.5-4b__ai_labels__101__control"
    assert first.block_id == "ollama_chat-qwen3.5-4b__ai_labels__101"
    assert confirmatory.trial("ollama_chat-granite4-3b__political_ad_targeting__419__distributed_sources").order == 255


def test_run_order_and_push_directions_equal_the_published_table(confirmatory):
    # The staged order (three topics on every model, then the fourth) is the row order of PV-SST's
    # published results table, whose push_direction column is the seed counterbalancing.
    with PUBLISHED.open() as handle:
        rows = list(csv.DictReader(handle))
    published = [(f"ollama_chat/{r['model']}", r["topic_id"], int(r["seed"]), r["condition"], r["push_direction"])
                 for r in rows]
    ours = [(t.model_name, t.topic_id, t.seed, t.condition, t.push_direction) for t in confirmatory.trials]
    assert ours == published


def test_stages_hold_whole_blocks_in_order(confirmatory):
    stages = confirmatory.stages()
    assert [len(stage) for stage in stages] == [192, 64]
    assert {t.topic_id for t in stages[1]} == {"political_ad_targeting"}
    assert [t.stage for t in confirmatory.trials] == [0] * 192 + [1] * 64
    for ids in confirmatory.blocks.values():
        assert len({confirmatory.trial(i).stage for i in ids}) == 1


def test_push_direction_is_the_same_in_every_arm_of_a_block(confirmatory):
    directions = Counter()
    for ids in confirmatory.blocks.values():
        sides = {confirmatory.trial(i).push_direction for i in ids}
        assert len(sides) == 1
        directions[sides.pop()] += 1
    assert directions == {"support": 32, "oppose": 32}


def test_expansion_is_deterministic():
    spec = load_spec(SPECS / "scripted_smoke.yaml")
    assert expand(spec) == expand(spec)
    assert len(expand(spec).trials) == 32 and len(expand(spec).blocks) == 8


def test_trial_ids_do_not_depend_on_the_other_factors_or_their_order():
    full = {t.trial_id for t in expand(design_spec()).trials}
    fewer = {t.trial_id for t in expand(design_spec(factors={"models": ["scripted/echo"], "seeds": [307, 101]})).trials}
    assert fewer < full
    assert trial_id("scripted/echo", "ai_labels", 307, "likes") in fewer


def test_run_order_by_puts_the_named_factor_outermost():
    design = expand(design_spec(run_order={"by": ["seed", "condition"]}))
    assert [t.seed for t in design.trials] == [101] * 8 + [211] * 8 + [307] * 8
    first_seed = design.trials[:8]
    assert [t.condition for t in first_seed] == ["control"] * 4 + ["likes"] * 4
    # the factors not named keep the default order (model, then topic)
    assert [(t.model_name, t.topic_id) for t in first_seed[:4]] == [
        ("scripted/imitate", "ai_labels"), ("scripted/imitate", "identity_verification"),
        ("scripted/echo", "ai_labels"), ("scripted/echo", "identity_verification")]


def test_stages_run_first_matching_stage_first():
    design = expand(design_spec(run_order={"stages": [{"seeds": [307]}, {"models": ["scripted/echo"]}, {}]}))
    stage_of = [(t.stage, t.seed, t.model_name) for t in design.trials]
    assert all(seed == 307 for stage, seed, _ in stage_of if stage == 0)
    assert all(model == "scripted/echo" and seed != 307 for stage, seed, model in stage_of if stage == 1)
    assert Counter(stage for stage, _, _ in stage_of) == {0: 8, 1: 8, 2: 8}
    assert [s for s, _, _ in stage_of] == sorted(s for s, _, _ in stage_of)


def test_a_coarser_block_key_pools_seeds_into_one_block():
    design = expand(design_spec(blocks={"block_key": ["model", "topic_id"]}))
    assert len(design.blocks) == 4
    assert {len(ids) for ids in design.blocks.values()} == {6}
    assert "scripted-echo__identity_verification" in design.blocks
