"""Shared helpers for engine tests: run a scripted trial in-process."""
from __future__ import annotations

from sim.llm.gateway import Gateway
from sim.topics import get_topic
from sim.trial.run import TrialResult, run_trial
from sim.trial.config import TrialConfig


def scripted_trial(condition: str, seed: int = 101, topic: str = "ai_labels", **overrides) -> TrialResult:
    config = TrialConfig(trial_id=f"{topic}__{seed}__{condition}", model_name="scripted/imitate",
                         topic=get_topic(topic), condition=condition, seed=seed, **overrides)
    gateway = Gateway()
    try:
        return run_trial(config, gateway)
    finally:
        gateway.close()
