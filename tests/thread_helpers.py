"""Shared builders of thread-study tests: a census persona table and whole studies on scripted models."""
from __future__ import annotations

from functools import lru_cache

import pandas as pd

from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.threads.plan import plan_threads
from pvsst.sim.threads.run import THREAD_TABLES, ThreadResult, run_thread
from pvsst.sim.threads.settings import ThreadSettings
from pvsst.sim.topics import get_topic

TOPICS = (get_topic("ai_labels"), get_topic("identity_verification"))


@lru_cache(maxsize=4)
def census_personas(n: int, seed: int = 1) -> pd.DataFrame:
    """``n`` census-seeded personas with cards (age, sex, state, education, income band, party, ...)."""
    from pvsst.personas.cards import personas_for_simulation
    from pvsst.personas.synthesis import synthesize

    return personas_for_simulation(synthesize(n, seed=seed).personas)


def run_study(settings: ThreadSettings, personas: pd.DataFrame, *, seed: int = 5,
              model: str = "scripted/thread_commenter", gateway: Gateway | None = None) -> list[ThreadResult]:
    """Every thread of a study, run in order through one gateway."""
    plans = plan_threads(settings, personas, TOPICS, seed=seed, model_name=model)
    own = gateway is None
    gateway = gateway or Gateway()
    try:
        return [run_thread(plan, gateway) for plan in plans]
    finally:
        if own:
            gateway.close()


def study_tables(results: list[ThreadResult]) -> dict[str, pd.DataFrame]:
    """Each thread table concatenated over the study's threads."""
    return {name: pd.concat([r.tables()[name] for r in results], ignore_index=True) for name in THREAD_TABLES}


class QuotingCommenter:
    """``scripted/quoting_commenter`` (registered by the thread spec coverage test): every post and comment
    holds a quoted phrase and a line break, so the two ways of rendering another persona's text differ;
    a vote request gets a valid instance of its schema."""

    name = "quoting_commenter"

    def reply(self, request):
        import json

        import numpy as np

        from pvsst.sim.llm.providers.scripted import schema_instance
        from pvsst.sim.llm.types import ProviderReply

        if request.schema:
            value = schema_instance(request.schema, np.random.default_rng(request.seed or 0), ["ok"])
            return ProviderReply(text=json.dumps(value), prompt_tokens=1, completion_tokens=1)
        return ProviderReply(text='They said "labels help"\nand I agree', prompt_tokens=1, completion_tokens=7)
