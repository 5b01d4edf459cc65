"""Spec coverage: every leaf field of the study spec reaches what it governs (a field that changes nothing
would let a preregistered setting be silently ignored).

The test walks the pydantic schema (:class:`pvsst.experiments.spec.study.StudySpec`), so a field added to it
anywhere is found without editing this file. For each leaf it runs a tiny scripted study (``scripted/
imitate``, 3 agents, 2 rounds, 3 trials; 6, two blocks, where a field needs two seeds or the
analysis is compared) twice through ``pvsst prereg freeze`` / ``pvsst run`` /
``pvsst analyze`` - once as the base spec, once with the field set to another valid value - and asserts
that the part of the run the field governs changed: the requests the providers received, the run store
(trial tables, metrics, manifest minus times, versions and its copy of the spec), or the analysis
outputs (``RUN/analysis/`` and the report's hypothesis verdicts). See ``tests/spec_coverage.py``.

A field is exempt only when it is listed in ``DESCRIPTIVE`` (text for people, not for the code) or
``SINGLE_VALUED`` (the schema admits one value, so there is nothing to change it to), each with its
reason. A new field with neither an entry in ``ALTERNATIVES`` nor an exemption fails the test with a
message saying how to add one.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import register_test_judges
from spec_coverage import (
    GATEWAY_CHANGES,
    RequestRecorder,
    analysis_fingerprint,
    leaf_paths,
    store_fingerprint,
    with_patch,
    write_identity_vectors,
    write_spec,
)

from pvsst.experiments.cli import main
from pvsst.experiments.spec.study import StudySpec
from pvsst.sim.topics import builtin_topics

pytestmark = pytest.mark.slow

DESCRIPTIVE = {
    "id": "names the study for people (shown in the progress bar, recorded as the manifest's spec_id)",
    "title": "the report's heading",
    "description": "free text for readers of the spec",
    "hypotheses[].statement": "the claim in words; the verdict is computed from contrast, metric, direction",
}
ECHO_ONLY = {
    "analysis.parse_failure_threshold": "scripted/imitate never fails to parse, so no trial is near any "
    "threshold; parse_failures.csv records it (its use: pvsst.analysis.stats.preregistered_checks.parse_failure_table)",
    "analysis.multiplicity": "with two blocks every randomization p is >= 0.5, where the rules agree; headline.csv "
    "records it (its use: tests/analysis/test_analyze_cli.py::test_every_row_records_the_frozen_settings, "
    "holm exactly)",
}
SINGLE_VALUED = {
    "spec_version": "Literal[1]: only one schema version exists",
    "trial.prompt_version": "only the v1 templates ship (sim/prompts/*_v1.txt); add an alternative when v2 does",
    "audit.fdr": "Literal['benjamini_hochberg']: the one false-discovery-rate method offered",
    "execution.chunk_size": "a survey instrument's setting: a study takes only its default "
                            "(tests/sim/test_gateway_config.py: another is refused)",
}

CONTRASTS = {"pdi": {"treatment": "distributed_sources", "control": "single_source"},
             "organic": {"treatment": "single_source", "control": "likes"}}
BASE: dict[str, Any] = {
    "spec_version": 1, "id": "coverage", "title": "Spec coverage", "description": "A tiny scripted study.",
    "hypotheses": [
        {"id": "H1", "statement": "One adversary moves similarity.", "contrast": "organic",
         "metric": "final_honest_pairwise_similarity", "direction": "positive", "primary": True},
        {"id": "H2", "statement": "Distributed sources move agents more.", "contrast": "pdi",
         "metric": "delta_alignment", "direction": "positive", "primary": False}],
    "outcomes": {"primary": ["final_honest_pairwise_similarity"], "secondary": ["delta_alignment"]},
    "factors": {"models": ["scripted/imitate"], "topics": ["ai_labels"], "seeds": [101],
                "conditions": ["likes", "single_source", "distributed_sources"]},
    "trial": {"n_agents": 3, "n_rounds": 2, "feed_size": 2, "votes_per_voter": 1, "memory_rounds": 1,
              "n_distributed_sources": 2},
    "analysis": {"contrasts": CONTRASTS, "bootstrap_draws": 50, "randomization": {"draws": 99}},
}


def _inline(topic_id: str) -> dict:
    topic = builtin_topics()[topic_id]
    return {"id": topic.id, "question": topic.question, "support_angle": topic.support_angle,
            "oppose_angle": topic.oppose_angle}


@dataclass(frozen=True)
class Alt:
    """Another valid value for a field: ``change`` (path -> value) applied on top of ``context`` (a setting
    of the base in which the field matters, applied to both runs), and the part it must reach."""

    change: dict[str, Any]
    reaches: str  # "requests", "store" or "analysis"
    context: dict[str, Any] = field(default_factory=dict)
    # For an analysis setting: must a result change too (not only the columns recording the setting)?
    # False only where this tiny study cannot show it, with the reason in ECHO_ONLY.
    changes_numbers: bool = True


NETWORK = "trial.network"
CENSUS = {"personas": {"source": "census", "n": 12, "geography": "US", "seed": 0}}
# The statistics need two blocks (seeds), as do the fields about seeds, the push direction (alternating by
# seed: one seed pushes one side only) and the order of trials; the rest runs one seed's 3 trials.
TWO_SEEDS = {"factors.seeds": [101, 211]}
STAGES = {**TWO_SEEDS,
          "run_order.stages": [{"name": "first", "seeds": [211]}, {"name": "second", "seeds": [101]}]}
# Identity injection: the embedded model, 2 census agents, 1 round, no votes, the likes and control arms (4 short
# post calls a run: a truncated reply is not cached, so the arms do not share them); vectors of sex and every
# education level written by _support_files. The fields reach the requests as each call's steering (the
# persona's vectors, layers, coef, noise, scope; the card in the prompt for `profile`), whatever the prompt
# says and the model replies, so the post prompt is the minimal materials_short one (a few dozen tokens,
# not about 250) and replies stop at 2 tokens: the model's prefill and decoding were about half
# of this test's time.
INJECTED = {**CENSUS, "factors.models": ["embedded/smollm2-135m"], "factors.conditions": ["likes", "control"],
            "analysis.contrasts": {"organic": {"treatment": "likes", "control": "control"}},
            "hypotheses": BASE["hypotheses"][:1], "analysis.parse_failure_threshold": 1.0,
            "trial.n_agents": 2, "trial.n_rounds": 1, "trial.votes_per_voter": 0, "trial.max_tokens": 2,
            "trial.max_attempts": 1, "protocol.materials": "materials_short",
            "identity_injection": {"vectors": "vectors_a.npz", "attributes": ["sex"], "layers": [10, 11], "coef": 1.0}}
# A provider whose reported stance varies (imitate's never does, so every audit p would be 1).
AUDIT = {**CENSUS, "factors.models": ["scripted/planted_stance_shift"],
         "audit": {"vary": {"sex": ["female", "male"]}, "matched_sets": 3, "permutations": 99}}
TWO_MODELS = {"factors.models": ["scripted/imitate", "scripted/echo"],
              "run_order.stages": [{"models": ["scripted/echo"]}, {"models": ["scripted/imitate"]}]}
TWO_TOPICS = {"factors.topics": ["ai_labels", "identity_verification"],
              "run_order.stages": [{"topics": ["identity_verification"]}, {"topics": ["ai_labels"]}]}

ALTERNATIVES: dict[str, Alt] = {
    **{path: Alt(change, "requests", context) for path, (change, context) in GATEWAY_CHANGES.items()},
    "hypotheses[].id": Alt({"hypotheses[0].id": "H1b"}, "analysis"),
    "hypotheses[].contrast": Alt({"hypotheses[1].contrast": "organic"}, "analysis"),
    "hypotheses[].metric": Alt({"hypotheses[1].metric": "final_honest_pairwise_similarity"}, "analysis"),
    "hypotheses[].direction": Alt({"hypotheses[0].direction": "negative"}, "analysis"),
    "hypotheses[].primary": Alt({"hypotheses[0].primary": False}, "analysis"),
    "outcomes.primary": Alt({"outcomes.primary": ["final_honest_pairwise_similarity", "majority_capture"]},
                            "analysis"),
    "outcomes.secondary": Alt({"outcomes.secondary": ["delta_alignment", "opposite_side_survival"]}, "analysis"),
    "factors.models": Alt({"factors.models": ["scripted/echo"]}, "requests"),
    "factors.topics[].id": Alt({"factors.topics": [{**_inline("ai_labels"), "id": "labels"}]}, "store",
                               {"factors.topics": [_inline("ai_labels")]}),
    "factors.topics[].question": Alt({"factors.topics[0].question": "Should AI images carry a label?"},
                                     "requests", {"factors.topics": [_inline("ai_labels")]}),
    "factors.topics[].support_angle": Alt({"factors.topics[0].support_angle": "Labels help readers."},
                                          "requests", {"factors.topics": [_inline("ai_labels")]}),
    "factors.topics[].oppose_angle": Alt({"factors.topics[0].oppose_angle": "Labels are unenforceable."},
                                         "requests", {**TWO_SEEDS, "factors.topics": [_inline("ai_labels")]}),
    "factors.seeds": Alt({"factors.seeds": [101, 307]}, "store", TWO_SEEDS),
    "factors.conditions": Alt({"factors.conditions": ["likes", "single_source", "distributed_sources", "control"]},
                              "store"),
    "blocks.block_key": Alt({"blocks.block_key": ["topic_id", "seed"]}, "store", TWO_SEEDS),
    "push_direction.by_seed": Alt({"push_direction": {"by_seed": {101: "oppose", 211: "oppose"}}}, "store",
                                  TWO_SEEDS),
    "push_direction.rule": Alt({"push_direction.rule": "all_support"}, "store", TWO_SEEDS),
    "trial.n_agents": Alt({"trial.n_agents": 4}, "store"),
    "trial.n_rounds": Alt({"trial.n_rounds": 3}, "store"),
    "trial.feed_size": Alt({"trial.feed_size": 1}, "requests"),
    "trial.votes_per_voter": Alt({"trial.votes_per_voter": 2}, "store"),
    "trial.memory_rounds": Alt({"trial.memory_rounds": 0}, "requests"),
    "trial.n_distributed_sources": Alt({"trial.n_distributed_sources": 3}, "store"),
    "trial.temperature": Alt({"trial.temperature": 0.5}, "requests"),
    "trial.vote_temperature": Alt({"trial.vote_temperature": 0.3}, "requests"),
    "trial.max_tokens": Alt({"trial.max_tokens": 100}, "requests"),
    "trial.vote_max_tokens": Alt({"trial.vote_max_tokens": 50}, "requests"),
    "trial.post_char_limit": Alt({"trial.post_char_limit": 40}, "requests"),
    "trial.max_attempts": Alt({"trial.max_attempts": 2}, "requests"),
    "trial.initial_confidence": Alt({"trial.initial_confidence": 0.6}, "store"),
    "trial.adversary_confidence": Alt({"trial.adversary_confidence": 0.9}, "store"),
    "trial.request_seed_formula": Alt({"trial.request_seed_formula": "hashed"}, "requests"),
    f"{NETWORK}.kind": Alt({f"{NETWORK}.kind": "barabasi_albert", f"{NETWORK}.m": 1}, "store"),
    f"{NETWORK}.p": Alt({f"{NETWORK}.p": 0.9}, "store", {NETWORK: {"kind": "erdos_renyi", "p": 0.2}}),
    f"{NETWORK}.m": Alt({f"{NETWORK}.m": 2}, "store",
                        {"trial.n_agents": 5, NETWORK: {"kind": "barabasi_albert", "m": 1}}),
    f"{NETWORK}.k": Alt({f"{NETWORK}.k": 4}, "store",
                        {"trial.n_agents": 6, NETWORK: {"kind": "watts_strogatz", "k": 2, "p": 0.0}}),
    f"{NETWORK}.homophily": Alt({f"{NETWORK}.homophily": 1.0}, "store",
                                {"trial.n_agents": 6,
                                 NETWORK: {"kind": "sbm", "attribute": "group", "p": 0.9, "homophily": 0.0}}),
    f"{NETWORK}.attribute": Alt({f"{NETWORK}.attribute": "persona_id"}, "store",
                                {"trial.n_agents": 6,
                                 NETWORK: {"kind": "sbm", "attribute": "group", "p": 0.9, "homophily": 1.0}}),
    f"{NETWORK}.path": Alt({f"{NETWORK}.path": "edges_b.txt"}, "store",
                           {NETWORK: {"kind": "edgelist", "path": "edges_a.txt"}}),
    "trial.feed_candidates": Alt({"trial.feed_candidates": "followees"}, "requests",
                                 {NETWORK: {"kind": "erdos_renyi", "p": 0.3}}),
    "trial.follow_dynamics": Alt({"trial.follow_dynamics": True}, "store"),
    "personas.source": Alt({"personas": {"source": "file", "path": "personas_a.csv"}}, "store"),
    "personas.n": Alt({"personas.n": 13}, "store", CENSUS),
    "personas.geography": Alt({"personas.geography": "CA"}, "store", CENSUS),
    "personas.seed": Alt({"personas.seed": 1}, "store", CENSUS),
    "personas.path": Alt({"personas.path": "personas_b.csv"}, "store",
                         {"personas": {"source": "file", "path": "personas_a.csv"}}),
    "personas.card_style": Alt({"personas.card_style": "first_person"}, "requests",
                               {"personas": {"source": "file", "path": "personas_a.csv"}}),
    "analysis.contrasts{}.name": Alt({"analysis.contrasts": {"pdi": CONTRASTS["pdi"],
                                                             "one_source": CONTRASTS["organic"]},
                                      "hypotheses[0].contrast": "one_source"}, "analysis"),
    "analysis.contrasts{}.treatment": Alt({"analysis.contrasts{pdi}.treatment": "likes"}, "analysis"),
    "analysis.contrasts{}.control": Alt({"analysis.contrasts{organic}.control": "distributed_sources"}, "analysis"),
    "analysis.metrics": Alt({"analysis.metrics": ["majority_capture"]}, "analysis"),
    "analysis.contrasts{}.metrics": Alt({"analysis.contrasts{pdi}.metrics": ["like_rate_chance"]}, "analysis"),
    # Every analysed run is judged by `lexicon` and `scripted/shifted_judge` (StudyRuns.analysed); without
    # the field the post measure reads the model judge, with it the lexicon judge.
    "analysis.stance_judge": Alt({"analysis.stance_judge": "lexicon"}, "analysis"),
    "analysis.bootstrap_draws": Alt({"analysis.bootstrap_draws": 1}, "analysis"),
    "analysis.bootstrap_seed": Alt({"analysis.bootstrap_seed": 1}, "analysis", {"analysis.bootstrap_draws": 3}),
    "analysis.randomization.method": Alt({"analysis.randomization.method": "monte_carlo"}, "analysis"),
    "analysis.randomization.draws": Alt({"analysis.randomization.draws": 199}, "analysis",
                                        {"analysis.randomization.method": "monte_carlo"}),
    "analysis.randomization.exhaustive_max_n": Alt({"analysis.randomization.exhaustive_max_n": 2}, "analysis",
                                                   {"analysis.randomization.exhaustive_max_n": 1}),
    "analysis.alpha": Alt({"analysis.alpha": 0.1}, "analysis"),
    "analysis.consistency.min_model_share": Alt({"analysis.consistency.min_model_share": 0.5}, "analysis"),
    "analysis.consistency.min_topic_share": Alt({"analysis.consistency.min_topic_share": 0.5}, "analysis"),
    "analysis.parse_failure_threshold": Alt({"analysis.parse_failure_threshold": 0.2}, "analysis",
                                            changes_numbers=False),
    "analysis.multiplicity": Alt({"analysis.multiplicity": "bonferroni"}, "analysis", changes_numbers=False),
    "budget.max_usd": Alt({"budget.max_usd": 5.0}, "store"),
    "budget.max_tokens": Alt({"budget.max_tokens": 200}, "store"),
    "execution.executor": Alt({"execution.executor": "ray"}, "requests"),
    "execution.workers": Alt({"execution.workers": 2}, "requests"),
    "execution.ray_address": Alt({"execution.ray_address": "ray://head:10001"}, "requests",
                                 {"execution.executor": "ray"}),
    "execution.max_concurrency": Alt({"execution.max_concurrency": 2}, "requests"),
    "run_order.stages[].name": Alt({"run_order.stages[0].name": "early"}, "store", STAGES),
    "run_order.stages[].seeds": Alt({"run_order.stages[0].seeds": [101], "run_order.stages[1].seeds": [211]},
                                    "store", STAGES),
    "run_order.stages[].models": Alt({"run_order.stages[0].models": ["scripted/imitate"],
                                      "run_order.stages[1].models": ["scripted/echo"]}, "store", TWO_MODELS),
    "run_order.stages[].topics": Alt({"run_order.stages[0].topics": ["ai_labels"],
                                      "run_order.stages[1].topics": ["identity_verification"]}, "store", TWO_TOPICS),
    "protocol.preset": Alt({"protocol.preset": "pvsst_reference"}, "store", {"trial.n_agents": 6}),
    "protocol.render": Alt({"protocol.render": "verbatim"}, "requests", {"factors.models": ["scripted/echo"]}),
    "protocol.materials": Alt({"protocol.materials": "materials_b"}, "requests"),
    "protocol.persona_order": Alt({"protocol.persona_order": "cycle"}, "store"),
    "protocol.initial_stances": Alt({"protocol.initial_stances": "reference"}, "store", {"trial.n_agents": 6}),
    "protocol.account_ids": Alt({"protocol.account_ids": "reference"}, "store"),
    "protocol.viewer_ordinal": Alt({"protocol.viewer_ordinal": "from_id"}, "requests",
                                   {"protocol.materials": "materials_ids"}),
    "protocol.adversary_opinion": Alt({"protocol.adversary_opinion": "drifts"}, "store"),
    "protocol.vote_sampling": Alt({"protocol.vote_sampling": "reference"}, "store"),
    "protocol.reply_handling": Alt({"protocol.reply_handling": "lenient"}, "requests"),
    "protocol.retry_seed": Alt({"protocol.retry_seed": "same"}, "requests"),
    "protocol.json_mode": Alt({"protocol.json_mode": "json_object"}, "requests"),
    "protocol.reasoning": Alt({"protocol.reasoning": "off"}, "requests"),
    # Recorded per trial in metrics.json when the trial runs (analysis reads it back from there).
    "protocol.similarity_edge_cases": Alt({"protocol.similarity_edge_cases": "reference"}, "store",
                                          {"factors.models": ["scripted/stopwords"]}),
    # The printed confidence (0.70 -> 0.7) is in every post and vote prompt.
    "protocol.number_format": Alt({"protocol.number_format": "python"}, "requests"),
    # Request fields the gateway acts on (tests/sim/test_failed_calls.py: tries, waits, the raw text, the wire).
    "protocol.transport_retries": Alt({"protocol.transport_retries": "reference"}, "requests"),
    "protocol.reasoning_blocks": Alt({"protocol.reasoning_blocks": "keep"}, "requests"),
    "protocol.ollama_route": Alt({"protocol.ollama_route": "generate"}, "requests"),
    # A vote reply without a usable vote becomes failed vote rows under `voters`, none under `rows`.
    "protocol.vote_error_denominator": Alt({"protocol.vote_error_denominator": "voters"}, "store",
                                           {"factors.models": ["scripted/novotes"],
                                            "protocol.reply_handling": "lenient"}),
    "run_order.by": Alt({"run_order.by": ["condition", "model", "topic_id", "seed"]}, "store", TWO_SEEDS),
    "identity_injection.vectors": Alt({"identity_injection.vectors": "vectors_b.npz"}, "requests", INJECTED),
    "identity_injection.attributes": Alt({"identity_injection.attributes": ["sex", "education"]}, "requests",
                                         INJECTED),
    "identity_injection.layers": Alt({"identity_injection.layers": [12]}, "requests", INJECTED),
    "identity_injection.coef": Alt({"identity_injection.coef": 3.0}, "requests", INJECTED),
    "identity_injection.noise_sigma": Alt({"identity_injection.noise_sigma": 0.5}, "requests", INJECTED),
    "identity_injection.scope": Alt({"identity_injection.scope": "prompt"}, "requests", INJECTED),
    "identity_injection.profile": Alt({"identity_injection.profile": False}, "requests", INJECTED),
    # The first-round audit units (RUN/audits/) and the study_audit tables of the analysis.
    "audit.vary": Alt({"audit.vary": {"sex": ["female", "male"], "race_ethnicity": ["black", "white"]}}, "store",
                      AUDIT),
    "audit.matched_sets": Alt({"audit.matched_sets": 4}, "store", AUDIT),
    "audit.arity_null": Alt({"audit.arity_null": False}, "store", AUDIT),
    "audit.alpha": Alt({"audit.alpha": 0.2}, "analysis", AUDIT),
    "audit.permutations": Alt({"audit.permutations": 199}, "analysis", AUDIT),
}


def covered_leaves() -> list[str]:
    return [p for p in leaf_paths(StudySpec) if p not in DESCRIPTIVE and p not in SINGLE_VALUED]


def test_every_leaf_field_has_an_alternative_or_a_documented_exemption():
    missing = [p for p in covered_leaves() if p not in ALTERNATIVES]
    assert not missing, (
        f"no alternative value known for spec field(s) {missing}: add an entry to ALTERNATIVES in "
        "tests/experiments/test_spec_coverage.py (Alt({path: other valid value}, 'requests' | 'store' | 'analysis', "
        "{context the field needs})), or, only for text no code reads, to DESCRIPTIVE with the reason")
    stale = [p for p in [*ALTERNATIVES, *DESCRIPTIVE, *SINGLE_VALUED] if p not in leaf_paths(StudySpec)]
    assert sorted(ECHO_ONLY) == sorted(p for p, alt in ALTERNATIVES.items() if not alt.changes_numbers)
    assert not stale, f"entries for fields the schema no longer has: {stale}"


def _support_files(directory: Path) -> None:
    """Files the file-based alternatives name: two edge lists, two persona tables, three materials
    directories (one reworded, one whose honest ids carry numbers other than their ordinals, one with a
    minimal post prompt for the embedded-model runs) and two identity-vectors files."""
    assert main(["protocol", "new", str(directory / "materials_b")]) == 0
    post_system = directory / "materials_b" / "post_system.txt"
    post_system.write_text("Coverage wording. " + post_system.read_text())
    assert main(["protocol", "new", str(directory / "materials_ids")]) == 0
    accounts = directory / "materials_ids" / "accounts.yaml"
    accounts.write_text(accounts.read_text().replace('honest: "a{i:0{width}d}"', 'honest: "a{i:02d}1"'))
    assert main(["protocol", "new", str(directory / "materials_short")]) == 0
    short = directory / "materials_short"
    (short / "post_system.txt").write_text("JSON.")
    (short / "post.txt").write_text("$question $persona $opinion $confidence $agenda$memory $feed")
    (directory / "edges_a.txt").write_text("a00 a01\na01 a02\n")
    (directory / "edges_b.txt").write_text("a00 a02\na02 a00\na01 a00\n")
    from pvsst.personas.synthesis import synthesize

    people = synthesize(8, geography="US", seed=3).personas
    people.iloc[:4].to_csv(directory / "personas_a.csv", index=False)
    people.iloc[4:].to_csv(directory / "personas_b.csv", index=False)
    write_identity_vectors(directory / "vectors_a.npz", seed=0)
    write_identity_vectors(directory / "vectors_b.npz", seed=1)


class RunRecord(dict):
    """What one run did: ``requests`` (recorded as it ran) and ``run`` (its folder); ``store``, the store's
    fingerprint, is taken the first time a comparison asks for it."""

    def __missing__(self, key: str):
        if key != "store":
            raise KeyError(key)
        self["store"] = store_fingerprint(self["run"])
        return self["store"]


class StudyRuns:
    """Runs (and memoises) the tiny study for a spec dict and fingerprints what it did.

    ``analysed(base, changed)`` is for fields the analysis governs: the changed spec is frozen and run
    into a copy of the base run (``pvsst run --deviation``: every trial is already done, so only the
    manifest's frozen spec changes), then analysed, so the simulation is not repeated.
    """

    def __init__(self, directory: Path, recorder: RequestRecorder):
        self.directory, self.recorder, self.memo = directory, recorder, {}
        self.names = iter(range(10 ** 6))
        _support_files(directory)

    def run(self, data: dict) -> dict:
        key = repr(sorted(_flat(data)))
        if key not in self.memo:
            name = f"s{next(self.names)}"
            spec = self._frozen(data, name)
            run = self.directory / f"{name}-run"
            with self.recorder.capture() as captured:
                code = main(["run", str(spec), "--out", str(run)])
            assert code in (0, 3), f"run of {spec} exited {code}"
            self.memo[key] = RunRecord(requests=captured["requests"], run=run)
        return self.memo[key]

    def analysed(self, base: dict, changed: dict | None = None) -> dict:
        key = repr(sorted(_flat(base))) + "|analysis|" + repr(sorted(_flat(changed or {})))
        if key not in self.memo:
            run = self.run(base)["run"]
            if changed is not None:
                name = f"a{next(self.names)}"
                copy = self.directory / f"{name}-run"
                shutil.copytree(run, copy)
                spec = self._frozen(changed, name)
                assert main(["run", str(spec), "--out", str(copy), "--deviation", "spec coverage: same trials, "
                             "changed analysis"]) == 0
                run = copy
            if not (run / "analysis" / "judgments").is_dir():
                for judge in ("lexicon", "scripted/shifted_judge"):
                    assert main(["judge", str(run), "--judge", judge]) == 0
            assert main(["analyze", str(run), "--homophily-replicates", "2"]) == 0
            self.memo[key] = analysis_fingerprint(run)
        return self.memo[key]

    def _frozen(self, data: dict, name: str) -> Path:
        spec = write_spec(self.directory / f"{name}.yaml", data)
        assert main(["prereg", "freeze", str(spec)]) == 0, spec.read_text()
        return spec


def _flat(value, prefix=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _flat(v, f"{prefix}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _flat(v, f"{prefix}[{i}]")
    else:
        yield prefix, repr(value)


@pytest.fixture(scope="module")
def study_runs(tmp_path_factory):
    from pvsst.sim.llm.providers.registry import register_scripted_provider

    register_scripted_provider("stopwords", "spec_coverage:StopwordProvider")
    register_scripted_provider("novotes", "spec_coverage:NoVoteProvider")
    register_test_judges()
    monkeypatch = pytest.MonkeyPatch()
    try:
        yield StudyRuns(tmp_path_factory.mktemp("coverage"), RequestRecorder(monkeypatch))
    finally:
        monkeypatch.undo()


def test_every_leaf_field_reaches_what_it_governs(study_runs):
    not_reached = []
    for path in covered_leaves():
        if path not in ALTERNATIVES:
            continue  # reported by the test above
        alt = ALTERNATIVES[path]
        base = with_patch(BASE, {**(TWO_SEEDS if alt.reaches == "analysis" else {}), **alt.context})
        changed = with_patch(base, alt.change)
        if alt.reaches == "analysis":
            before, after = study_runs.analysed(base), study_runs.analysed(base, changed)
        else:
            before, after = study_runs.run(base), study_runs.run(changed)
        if before[alt.reaches] == after[alt.reaches]:
            not_reached.append(f"{path} (set {alt.change}) did not change the {alt.reaches}")
        elif alt.reaches == "analysis" and alt.changes_numbers and before["numbers"] == after["numbers"]:
            not_reached.append(f"{path} (set {alt.change}) changed only the analysis' record of the setting, "
                               "no result")
    assert not not_reached, "frozen setting(s) that never reach the code they govern:\n" + "\n".join(not_reached)
