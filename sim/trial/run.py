"""Run one trial and collect its tables: the engine's entry point.

Examples
--------
>>> from pvsst.sim.topics import get_topic
>>> from pvsst.sim.trial.settings import TrialSetup
>>> from pvsst.sim.llm.gateway import Gateway
>>> cfg = TrialSetup(trial_id="t", model_name="scripted/imitate", topic=get_topic("ai_labels"),
...                   condition="single_source", seed=101, n_agents=6, n_rounds=3)
>>> result = run_trial(cfg, Gateway())
>>> int(result.exposures["is_adversarial"].sum()), cfg.expected_adversarial_impressions
(12, 12)
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from pvsst.sim.llm.prompt_table import prompt_table
from pvsst.sim.llm.steering import Steering
from pvsst.sim.llm.types import CALL_RECORD_FIELDS
from pvsst.sim.model import SocialModel
from pvsst.sim.trial.settings import TrialSetup


@dataclass
class TrialResult:
    """The tables of one finished trial (docs/run-store.md) plus its configuration."""

    config: TrialSetup
    agents: pd.DataFrame
    posts: pd.DataFrame
    votes: pd.DataFrame
    exposures: pd.DataFrame
    edges: pd.DataFrame
    llm_calls: pd.DataFrame
    elapsed_s: float
    prompts: pd.DataFrame = field(default_factory=lambda: prompt_table([]))

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"agents": self.agents, "posts": self.posts, "votes": self.votes, "exposures": self.exposures,
                "edges": self.edges, "llm_calls": self.llm_calls, "prompts": self.prompts}


def agents_frame(model: SocialModel) -> pd.DataFrame:
    """One row per account: ids, role, persona id and attributes, initial stance and confidence."""
    rows = []
    for agent in model.accounts:
        persona = {k: v for k, v in agent.persona.items() if k not in ("card",)}
        row = {
            "trial_id": model.config.trial_id,
            "agent_id": agent.agent_id,
            "role": "adversary" if agent.is_adversary else "honest",
            "persona_id": str(persona.pop("persona_id")),
            "initial_stance": agent.initial_stance,
            "initial_confidence": agent.initial_confidence,
            "final_stance": agent.stance,
            "final_confidence": agent.confidence,
        }
        for key, value in persona.items():
            row[key if key not in row else f"persona_{key}"] = value
        rows.append(row)
    return pd.DataFrame(rows)


def prepare_trial(config: TrialSetup, personas: pd.DataFrame | None = None,
                  steerings: Mapping[str, Steering] | None = None) -> SocialModel:
    """Build the population, personas and network of a trial without calling any model.

    Bad input (persona table, network) fails here, before anything is written. ``steerings``: the
    identity injection of each persona's calls, by persona id (:class:`~pvsst.sim.model.SocialModel`).
    """
    return SocialModel(config, gateway=None, personas=personas, steerings=steerings)


def run_trial(config: TrialSetup, gateway, personas: pd.DataFrame | None = None,
              on_round: Callable[[int], None] | None = None, model: SocialModel | None = None,
              steerings: Mapping[str, Steering] | None = None) -> TrialResult:
    """Run every round of one trial through ``gateway``; raises if the exposure check fails.

    ``model`` may be one returned by :func:`prepare_trial` for the same config (and steerings).
    """
    started = time.perf_counter()
    gateway.drain_records()
    model = model or prepare_trial(config, personas, steerings)
    model.gateway, model.on_round = gateway, on_round
    model.run()
    records = [r.to_dict() for r in gateway.drain_records()]
    calls = pd.DataFrame(records, columns=list(CALL_RECORD_FIELDS))
    rec = model.recorder
    return TrialResult(config, agents_frame(model), rec.posts.frame(), rec.votes.frame(), rec.exposures.frame(),
                       rec.edges.frame(), calls, time.perf_counter() - started, rec.prompts.frame())
