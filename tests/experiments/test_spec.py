"""The study-spec schema: shipped specs, canonical form and hash, strictness, cross-field rules."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml
from builders import small_study_data, small_study_spec
from pydantic import ValidationError
from reference_paths import PUBLISHED_CONFIG

from pvsst.core.errors import InputError
from pvsst.experiments.spec.study import (
    StudySpec,
    canonical_spec,
    describe_validation_error,
    load_spec,
    model_slug,
    spec_from_canonical,
    spec_sha256,
)
from pvsst.experiments.spec.trial import max_request_seed
from pvsst.sim.topics import builtin_topics
from pvsst.sim.trial.settings import TrialSettings

SPECS = Path(__file__).resolve().parents[2] / "experiments" / "specs"
REFERENCE = PUBLISHED_CONFIG
SHIPPED = ("pvsst_confirmatory", "pvsst_unranked_extension", "quickstart", "scripted_smoke")


def first_error(data: dict) -> tuple[str, str]:
    with pytest.raises(ValidationError) as info:
        StudySpec.model_validate(data)
    return describe_validation_error(info.value, StudySpec)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_spec_loads_and_round_trips_through_its_canonical_form(name):
    spec = load_spec(SPECS / f"{name}.yaml")
    canonical = canonical_spec(spec)
    rebuilt = spec_from_canonical(canonical)
    assert rebuilt == spec
    assert spec_sha256(rebuilt) == spec_sha256(spec)
    # the hash is sha256 over sorted, whitespace-free JSON of the canonical form
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert spec_sha256(spec) == hashlib.sha256(text.encode()).hexdigest()


def test_confirmatory_spec_reproduces_the_frozen_pvsst_configuration():
    reference = yaml.safe_load(REFERENCE.read_text())
    spec = load_spec(SPECS / "pvsst_confirmatory.yaml")
    assert [m.removeprefix("ollama_chat/") for m in spec.factors.models] == reference["models"]
    assert spec.factors.seeds == reference["seeds"]
    assert spec.factors.conditions == reference["conditions"]
    assert [t.model_dump() for t in spec.factors.topics] == reference["topics"]
    trial = spec.trial
    assert (trial.n_agents, trial.n_rounds, trial.feed_size, trial.votes_per_voter, trial.n_distributed_sources,
            trial.temperature, trial.max_tokens, trial.vote_max_tokens, trial.post_char_limit) == (
        reference["num_honest_agents"], reference["num_rounds"], reference["feed_size"],
        reference["voting_k_per_voter"], reference["num_distributed_sources"], reference["temperature"],
        reference["max_tokens"], reference["vote_max_tokens"], reference["post_char_limit"])
    assert spec.execution.max_concurrency == reference["parallel_requests"]
    assert spec.execution.request_timeout_s == reference["request_timeout"]
    assert spec.push_directions() == {101: "support", 211: "oppose", 307: "support", 419: "oppose"}
    contrasts = {name: (c.treatment, c.control) for name, c in spec.analysis.contrasts.items()}
    # the four contrasts of shared/reference/README.md
    assert contrasts == {"pdi_distributed_minus_single": ("distributed_sources", "single_source"),
                         "engagement_likes_minus_control": ("likes", "control"),
                         "single_minus_organic": ("single_source", "likes"),
                         "distributed_minus_organic": ("distributed_sources", "likes")}
    primary = [h for h in spec.hypotheses if h.primary]
    assert [(h.contrast, h.metric, h.direction) for h in primary] == [
        ("pdi_distributed_minus_single", "delta_alignment", "positive")]
    assert (spec.analysis.bootstrap_draws, spec.analysis.bootstrap_seed) == (20000, 20260729)
    assert spec.analysis.consistency.min_topic_share == 2 / 3


def test_unranked_extension_adds_the_unranked_arm_and_its_two_contrasts():
    spec = load_spec(SPECS / "pvsst_unranked_extension.yaml")
    confirmatory = load_spec(SPECS / "pvsst_confirmatory.yaml")
    assert spec.factors.conditions == ["control", "likes", "unranked", "single_source", "distributed_sources"]
    added = set(spec.analysis.contrasts) - set(confirmatory.analysis.contrasts)
    assert added == {"likes_minus_unranked", "unranked_minus_control"}
    assert (spec.analysis.contrasts["likes_minus_unranked"].treatment,
            spec.analysis.contrasts["likes_minus_unranked"].control) == ("likes", "unranked")
    assert spec.trial == confirmatory.trial


def test_canonical_form_fills_defaults_and_resolves_builtin_topics():
    canonical = canonical_spec(small_study_spec())
    assert canonical["trial"]["n_agents"] == 12 and canonical["trial"]["vote_max_tokens"] == 70
    assert canonical["analysis"]["randomization"] == {"draws": 1000000, "exhaustive_max_n": 20, "method": "auto"}
    assert canonical["push_direction"] == {"by_seed": None, "rule": "alternate"}
    assert canonical["factors"]["topics"] == [{"id": "ai_labels", **{
        key: getattr(builtin_topics()["ai_labels"], key) for key in ("question", "support_angle", "oppose_angle")}}]
    assert list(canonical) == sorted(canonical)


def test_builtin_topic_id_and_the_same_topic_inline_hash_identically():
    topic = builtin_topics()["ai_labels"]
    inline = {"id": topic.id, "question": topic.question, "support_angle": topic.support_angle,
              "oppose_angle": topic.oppose_angle}
    by_id = small_study_spec()
    written_out = small_study_spec(factors={"topics": [inline]})
    assert spec_sha256(by_id) == spec_sha256(written_out)


def test_writing_a_default_explicitly_does_not_change_the_hash_but_any_value_does():
    base = spec_sha256(small_study_spec())
    assert spec_sha256(small_study_spec(trial={"n_agents": 12})) == base
    assert spec_sha256(small_study_spec(trial={"n_agents": 13})) != base
    assert spec_sha256(small_study_spec(description="other words")) != base


def test_types_are_not_coerced():
    assert first_error(small_study_data(trial={"n_agents": "12"}))[0] == "trial.n_agents"
    assert first_error(small_study_data(trial={"follow_dynamics": 1}))[0] == "trial.follow_dynamics"
    assert first_error(small_study_data(trial={"n_rounds": 2.0}))[0] == "trial.n_rounds"
    # an integer is a valid float
    assert small_study_spec(trial={"temperature": 1}).trial.temperature == 1.0


def test_unknown_key_names_a_close_match():
    field, problem = first_error(small_study_data(trial={"n_agent": 6}))
    assert field == "trial.n_agent"
    assert "did you mean 'n_agents'?" in problem


@pytest.mark.parametrize("changes, field, phrase", [
    ({"factors": {"seeds": [101, 211], "models": ["scripted/imitate", "scripted/imitate"]}}, "factors.models[1]",
     "twice"),
    ({"factors": {"topics": ["ai_labels", "ai_labels"]}}, "factors.topics[1].id", "twice"),
    ({"factors": {"conditions": ["control", "likes", "likes"]}}, "factors.conditions[2]", "twice"),
    ({"push_direction": {"by_seed": {101: "support", 211: "oppose", 5: "oppose"}}}, "push_direction.by_seed[5]",
     "not in factors.seeds"),
    ({"outcomes": {"primary": ["final_honest_pairwise_similarity"], "secondary": ["final_honest_pairwise_similarity"]}},
     "outcomes.secondary[0]", "already a primary"),
    ({"outcomes": {"primary": ["delta_alignment"], "secondary": ["final_honest_pairwise_similarity"]}},
     "hypotheses[0].metric", "primary hypothesis must test a primary outcome"),
    ({"trial": {"network": {"kind": "complete", "p": 0.3}}}, "trial.network.p", "not used by network kind"),
    ({"trial": {"n_agents": 4, "network": {"kind": "barabasi_albert", "m": 4}}}, "trial.network.m", "below n_agents"),
    ({"personas": {"source": "default", "geography": "CA"}}, "personas.geography", "only used when source is 'census'"),
    ({"personas": {"source": "census", "n": 3}}, "personas.n", "cannot seat"),
    ({"execution": {"ray_address": "ray://head:10001"}}, "execution.ray_address", "executor 'ray'"),
    ({"run_order": {"by": ["seed", "seed"]}}, "run_order.by[1]", "twice"),
    ({"run_order": {"stages": [{"seeds": [101]}, {"seeds": [211, 999]}]}}, "run_order.stages[1].seeds[1]",
     "not in factors.seeds"),
    ({"blocks": {"block_key": ["model", "topic_id"]}, "run_order": {"stages": [{"seeds": [101]}, {"seeds": [211]}]}},
     "run_order.stages", "split across stages"),
    ({"trial": {"prompt_version": "v999"}}, "trial.prompt_version", "no prompt template"),
])
def test_cross_field_rules_name_the_field(changes, field, phrase):
    got_field, problem = first_error(small_study_data(**changes))
    assert got_field == field
    assert phrase in problem


def test_request_seed_formula_limits():
    # PV-SST's formula: trial_seed*100000 + round*1000 + phase*500 + ordinal must stay below 2**31
    field, problem = first_error(small_study_data(factors={"seeds": [101, 30000]}))
    assert field == "factors.seeds[1]" and "2**31-1" in problem
    field, problem = first_error(small_study_data(trial={"n_agents": 600}))
    assert field == "trial.n_agents" and "hashed" in problem
    big = small_study_spec(trial={"n_agents": 600, "request_seed_formula": "hashed"})
    assert big.trial.n_agents == 600
    assert max_request_seed(TrialSettings(), 419, 4) == 419 * 100000 + 6 * 1000 + 500 + 12 + 4 - 1


def test_push_direction_rules():
    spec = small_study_spec(factors={"seeds": [419, 101, 307, 211]})
    assert spec.push_directions() == {101: "support", 211: "oppose", 307: "support", 419: "oppose"}
    spec = small_study_spec(push_direction={"rule": "all_oppose"})
    assert set(spec.push_directions().values()) == {"oppose"}


def test_model_slug_is_file_name_safe():
    assert model_slug("hosted_vllm/meta-llama/Llama-3.1-8B-Instruct") == "hosted_vllm-meta-llama-Llama-3.1-8B-Instruct"
    assert model_slug("ollama/qwen3.5:4b") == "ollama-qwen3.5-4b"


def test_load_spec_reports_one_line_with_file_and_field(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(small_study_data(trial={"feed_size": 0})))
    with pytest.raises(InputError) as info:
        load_spec(path)
    assert info.value.field == "trial.feed_size"
    assert str(info.value).startswith(f"{path}: trial.feed_size: ")
    assert "\n" not in str(info.value)
    with pytest.raises(InputError) as info:
        load_spec(tmp_path / "missing.yaml")
    assert info.value.field == "file"
