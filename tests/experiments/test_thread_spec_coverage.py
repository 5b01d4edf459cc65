"""Thread spec coverage: every leaf field of the ``schedule: threads`` spec reaches what it governs.

As for the study spec (tests/experiments/test_spec_coverage.py): the test walks the pydantic schema
(:class:`pvsst.experiments.spec.thread_study.ThreadStudySpec`), and for each leaf runs a tiny thread
study (1 thread, 4 engaged personas, 2 rounds, ``scripted/thread_commenter``) through ``pvsst run`` twice,
as the base spec and with the field set to another valid value, and asserts that the requests the
providers received or the run store (thread tables, the manifest minus times and its copy of the spec)
changed. A field is exempt only with a reason (``DESCRIPTIVE``, ``SINGLE_VALUED``, ``NOT_SHOWN``).
"""
from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from spec_coverage import (
    GATEWAY_CHANGES,
    SPEC_COPY_KEYS,
    TIMING_KEYS,
    RequestRecorder,
    leaf_paths,
    table_digest,
    with_patch,
    write_spec,
)

from pvsst.experiments.cli import main
from pvsst.experiments.spec.thread_study import ThreadStudySpec
from pvsst.personas.synthesis import synthesize
from pvsst.sim.materials import default_materials_dir
from pvsst.sim.materials.catalog import THREAD_FILES

pytestmark = pytest.mark.slow

DESCRIPTIVE = {
    "title": "the report's heading",
    "description": "free text for readers of the spec",
}
SINGLE_VALUED = {
    "spec_version": "Literal[1]: only one schema version exists",
    "schedule": "Literal['threads']: the value that makes the file a thread study",
    "threads.parent_choice": "Literal['top']: the original's one mode",
    "execution.chunk_size": "a survey instrument's setting: a thread study takes only its default",
}
NOT_SHOWN = {
    "topics[].support_angle": "the topic model is shared with feed studies; the thread templates show only the "
    "question (sim/threads/prompts.py)",
    "topics[].oppose_angle": "as support_angle",
    "parse_failure_threshold": "the scripted commenter never fails a call, so no thread is near any threshold; "
    "its use is the kernel's degraded status (tests/experiments/test_run_kernel.py)",
}


@dataclass
class Alt:
    """Another valid value of a field (``change``), what it reaches and the setting it needs (``context``)."""

    change: dict[str, Any]
    reaches: str  # "requests" or "store"
    context: dict[str, Any] = field(default_factory=dict)


BASE: dict[str, Any] = {
    "schedule": "threads", "id": "coverage", "title": "Thread spec coverage", "description": "A tiny thread study.",
    "model": "scripted/thread_commenter", "topics": ["ai_labels"], "seed": 3,
    "threads": {"n_threads": 1, "engaged_profiles": 4, "n_rounds": 2},
    "personas": {"source": "default"},
}
CENSUS = {"personas": {"source": "census", "n": 8}}
FILE_A = {"personas": {"source": "file", "path": "personas_a.csv"}}
VOTES = {"threads.comment_votes": True}
ALTERNATIVES: dict[str, Alt] = {
    "id": Alt({"id": "coverage_b"}, "store"),  # the manifest's spec_id
    "model": Alt({"model": "scripted/thread_discloser"}, "requests"),
    "topics[].id": Alt({"topics": [{"id": "own", "question": "Should AI-generated content be labeled on social "
                                    "platforms?", "support_angle": "a", "oppose_angle": "b"}]}, "store"),
    "topics[].question": Alt({"topics": ["identity_verification"]}, "requests"),
    "seed": Alt({"seed": 4}, "store"),
    "threads.n_threads": Alt({"threads.n_threads": 2}, "store"),
    "threads.engaged_profiles": Alt({"threads.engaged_profiles": 5}, "store"),
    "threads.n_rounds": Alt({"threads.n_rounds": 1}, "store"),
    "threads.max_actions": Alt({"threads.max_actions": 1}, "store"),
    "threads.comment_probability": Alt({"threads.comment_probability": 0.9}, "store"),
    "threads.comment_probability_decay": Alt({"threads.comment_probability_decay": 0.5}, "store"),
    "threads.comment_probability_floor": Alt({"threads.comment_probability_floor": 1.0}, "store",
                                              {"threads.comment_probability": 1.0,
                                               "threads.comment_probability_decay": 0.5}),
    "threads.p_critic": Alt({"threads.p_critic": 1.0}, "store"),
    "threads.p_short": Alt({"threads.p_short": 0.0}, "store"),
    "threads.short_words.min": Alt({"threads.short_words": {"min": 2, "max": 10}}, "requests"),
    "threads.short_words.max": Alt({"threads.short_words": {"min": 1, "max": 9}}, "requests"),
    "threads.long_words.min": Alt({"threads.long_words": {"min": 11, "max": 50}}, "requests"),
    "threads.long_words.max": Alt({"threads.long_words": {"min": 10, "max": 40}}, "requests"),
    "threads.max_depth": Alt({"threads.max_depth": 1}, "store"),
    "threads.max_children": Alt({"threads.max_children": 1}, "store"),
    "threads.max_root_replies": Alt({"threads.max_root_replies": 1}, "store"),
    "threads.top_candidates": Alt({"threads.top_candidates": 1}, "store"),
    "threads.root_candidate_rounds": Alt({"threads.root_candidate_rounds": 2}, "store"),
    "threads.caps": Alt({"threads.caps": "original"}, "store", {"threads.max_depth": 1}),
    "threads.comment_votes": Alt(VOTES, "store"),
    "threads.votes_per_voter": Alt({"threads.votes_per_voter": 1}, "store", VOTES),
    "threads.temperature": Alt({"threads.temperature": 0.5}, "requests"),
    "threads.max_tokens": Alt({"threads.max_tokens": 60}, "requests"),
    "threads.post_max_tokens": Alt({"threads.post_max_tokens": 100}, "requests"),
    "threads.vote_temperature": Alt({"threads.vote_temperature": 0.2}, "requests", VOTES),
    "threads.vote_max_tokens": Alt({"threads.vote_max_tokens": 50}, "requests", VOTES),
    "threads.render": Alt({"threads.render": "verbatim"}, "requests", {"model": "scripted/quoting_commenter"}),
    "personas.source": Alt(CENSUS, "store"),
    "personas.n": Alt({"personas.n": 9}, "store", CENSUS),
    "personas.geography": Alt({"personas.geography": "CA"}, "store", CENSUS),
    "personas.seed": Alt({"personas.seed": 1}, "store", CENSUS),
    "personas.path": Alt({"personas.path": "personas_b.csv"}, "store", FILE_A),
    "personas.card_style": Alt({"personas.card_style": "first_person"}, "requests", FILE_A),
    "materials": Alt({"materials": "materials_b"}, "requests"),
    "max_attempts": Alt({"max_attempts": 2}, "requests"),
    "budget.max_usd": Alt({"budget.max_usd": 5.0}, "store"),
    "budget.max_tokens": Alt({"budget.max_tokens": 200}, "store"),
    "execution.executor": Alt({"execution.executor": "ray"}, "requests"),
    "execution.workers": Alt({"execution.workers": 2}, "requests"),
    "execution.ray_address": Alt({"execution.ray_address": "ray://head:10001"}, "requests",
                                 {"execution.executor": "ray"}),
    "execution.max_concurrency": Alt({"execution.max_concurrency": 2}, "requests"),
    **{path: Alt(change, "requests", context) for path, (change, context) in GATEWAY_CHANGES.items()},
}


def test_every_leaf_field_has_an_alternative_or_a_documented_exemption():
    leaves = leaf_paths(ThreadStudySpec)
    exempt = {**DESCRIPTIVE, **SINGLE_VALUED, **NOT_SHOWN}
    missing = [p for p in leaves if p not in ALTERNATIVES and p not in exempt]
    assert not missing, f"add an Alt(...) to ALTERNATIVES (or a reasoned exemption) for: {missing}"
    stale = sorted((set(ALTERNATIVES) | set(exempt)) - set(leaves))
    assert not stale, f"entries for fields the schema no longer has: {stale}"


def _support_files(directory: Path) -> None:
    personas = synthesize(16, seed=1).personas
    personas.iloc[:8].to_csv(directory / "personas_a.csv", index=False)
    personas.iloc[8:].to_csv(directory / "personas_b.csv", index=False)
    materials = directory / "materials_b"
    materials.mkdir()
    for name in THREAD_FILES:
        shutil.copy(default_materials_dir() / name, materials / name)
    post = materials / "thread_post.txt"
    post.write_text(post.read_text() + "\nKeep it civil.\n")


def _store(run: Path) -> str:
    parts = {f"{p.parent.name}/{p.name}": table_digest(p) for p in sorted(run.glob("threads/*/*.parquet"))}
    manifest = json.loads((run / "manifest.json").read_text())
    keep = {k: v for k, v in manifest.items() if k not in TIMING_KEYS | SPEC_COPY_KEYS - {"spec_id"}
            and k not in ("runs", "deviations", "created_at", "threads", "model_calls")}
    units = {u: {k: v for k, v in entry.items() if k not in TIMING_KEYS} for u, entry in manifest["threads"].items()}
    sessions = [{k: v for k, v in r.items() if k in ("executor", "workers", "budget_usd", "summary")}
                for r in manifest["runs"]]
    return hashlib.sha256(json.dumps([parts, keep, units, sessions], sort_keys=True, default=str).encode()).hexdigest()


@pytest.fixture(scope="module")
def thread_runs(tmp_path_factory):
    from pvsst.sim.llm.providers.registry import register_scripted_provider

    register_scripted_provider("quoting_commenter", "thread_helpers:QuotingCommenter")
    directory = tmp_path_factory.mktemp("thread-coverage")
    _support_files(directory)
    monkeypatch = pytest.MonkeyPatch()
    recorder = RequestRecorder(monkeypatch)
    memo: dict[str, dict] = {}
    names = iter(range(10 ** 6))

    def run(data: dict) -> dict:
        key = json.dumps(data, sort_keys=True)
        if key not in memo:
            name = f"s{next(names)}"
            spec = write_spec(directory / f"{name}.yaml", data)
            with recorder.capture() as captured:
                code = main(["run", str(spec), "--out", str(directory / f"{name}-run"), "--deviation", "coverage"])
            assert code in (0, 3), f"run of {spec} exited {code}"
            memo[key] = {"requests": captured["requests"], "store": _store(directory / f"{name}-run")}
        return memo[key]

    try:
        yield run
    finally:
        monkeypatch.undo()


def test_every_leaf_field_reaches_what_it_governs(thread_runs):
    not_reached = []
    for path in leaf_paths(ThreadStudySpec):
        if path not in ALTERNATIVES:
            continue  # reported by the test above
        alt = ALTERNATIVES[path]
        base = with_patch(BASE, alt.context)
        before, after = thread_runs(base), thread_runs(with_patch(base, alt.change))
        if before[alt.reaches] == after[alt.reaches]:
            not_reached.append(f"{path} (set {alt.change}) did not change the {alt.reaches}")
    assert not not_reached, "thread settings that never reach the code they govern:\n" + "\n".join(not_reached)
