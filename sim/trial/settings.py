"""The parameters of one trial: the single definition of every trial setting, its default and bound.

:class:`TrialSettings` is the protocol (defaults reproduce PV-SST: 12 agents, 6 rounds, feed 5,
votes 5, ...). The study spec's ``trial`` section *is* this model (``pvsst.experiments.spec.trial`` only adds
checks that need the rest of the spec), so a bound or a default is written once, here.
:class:`TrialSetup` adds what makes one trial of a study: its id, model, topic, arm, seed and push.

Examples
--------
>>> from pvsst.sim.topics import get_topic
>>> cfg = TrialSetup(trial_id="t1", model_name="scripted/imitate", topic=get_topic("ai_labels"),
...                   condition="likes", seed=101)
>>> cfg.push_direction, cfg.n_agents, cfg.n_rounds
('support', 12, 6)
>>> TrialSetup(trial_id="t1", model_name="scripted/imitate", topic=get_topic("ai_labels"),
...             condition="likes", seed=101, n_agents=1)
Traceback (most recent call last):
...
pvsst.core.errors.InputError: trial: n_agents: Input should be greater than or equal to 2 (got 1)
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from pvsst.core.bounds import (
    MAX_AGENTS,
    MAX_ATTEMPTS,
    MAX_CHARACTERS,
    MAX_DISTRIBUTED_SOURCES,
    MAX_FEED_SIZE,
    MAX_ROUNDS,
    MAX_TOKENS,
    MAX_VOTES_PER_VOTER,
)
from pvsst.core.errors import InputError
from pvsst.core.validation import Identifier, Share, SpecFieldError, StrictModel, describe_validation_error
from pvsst.sim.conditions import Condition, get_condition
from pvsst.sim.network import NetworkSpec
from pvsst.sim.protocol import Protocol
from pvsst.sim.topics import Topic

# PV-SST counterbalances the push direction by seed; other seeds alternate by parity.
PVSST_PUSH_BY_SEED = {101: "support", 307: "support", 211: "oppose", 419: "oppose"}



def default_push_direction(seed: int) -> str:
    """PV-SST's map for its four seeds (101, 307 support; 211, 419 oppose); odd seeds support otherwise."""
    return PVSST_PUSH_BY_SEED.get(int(seed), "support" if int(seed) % 2 else "oppose")


class TrialSettings(StrictModel):
    """The settings of one trial; every default is PV-SST's (``tests/data/pvsst_reference/pvsst_confirmatory_v1.yaml``).

    ``request_seed_formula``: ``pvsst`` is PV-SST's ``trial_seed*100000 + round*1000 + phase*500 +
    ordinal`` (distinct seeds only while rounds < 100 and agents + adversaries <= 500); ``hashed`` takes
    31 bits of a sha256 over the four numbers (``pvsst.sim.seeds.request_seed``), for populations beyond that.
    ``votes_per_voter: 0`` turns voting off (no vote calls); ``follow_dynamics`` follows on a like and
    unfollows on a downvote, so it costs no extra model calls. ``max_attempts`` is how often the gateway
    asks again for a reply that fails the schema.

    Examples
    --------
    >>> TrialSettings().n_agents, TrialSettings(n_agents=6, n_rounds=3).feed_size
    (12, 5)
    """

    n_agents: Annotated[int, Field(ge=2, le=MAX_AGENTS)] = 12
    n_rounds: Annotated[int, Field(ge=1, le=MAX_ROUNDS)] = 6
    feed_size: Annotated[int, Field(ge=1, le=MAX_FEED_SIZE)] = 5
    votes_per_voter: Annotated[int, Field(ge=0, le=MAX_VOTES_PER_VOTER)] = 5
    memory_rounds: Annotated[int, Field(ge=0, le=MAX_ROUNDS)] = 3
    n_distributed_sources: Annotated[int, Field(ge=1, le=MAX_DISTRIBUTED_SOURCES)] = 4
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] = 0.8
    vote_temperature: Annotated[float, Field(ge=0.0, le=2.0)] = 0.6
    max_tokens: Annotated[int, Field(ge=1, le=MAX_TOKENS)] = 120
    vote_max_tokens: Annotated[int, Field(ge=1, le=MAX_TOKENS)] = 70
    post_char_limit: Annotated[int, Field(ge=1, le=MAX_CHARACTERS)] = 180
    max_attempts: Annotated[int, Field(ge=1, le=MAX_ATTEMPTS)] = 3
    initial_confidence: Share = 0.70
    adversary_confidence: Share = 0.85
    request_seed_formula: Literal["pvsst", "hashed"] = "pvsst"
    network: NetworkSpec = NetworkSpec()
    feed_candidates: Literal["population", "followees"] = "population"
    follow_dynamics: bool = False
    prompt_version: Identifier = "v1"

    @field_validator("prompt_version")
    @classmethod
    def _templates_exist(cls, value: str) -> str:
        if value != "v1":
            raise SpecFieldError("", f"no prompt template version {value!r}: the wording of prompts comes from "
                                 "a materials directory (protocol.materials); prompt_version stays v1")
        return value

    @model_validator(mode="after")
    def _network_fits_population(self) -> TrialSettings:
        network = self.network
        if network.m is not None and network.m >= self.n_agents:
            raise SpecFieldError("network.m", f"must be below n_agents ({self.n_agents})")
        if network.k is not None and network.k >= self.n_agents:
            raise SpecFieldError("network.k", f"must be below n_agents ({self.n_agents})")
        return self

    def parameters(self) -> dict[str, Any]:
        """The trial settings by name (the values themselves, not copies), e.g. to build a :class:`TrialSetup`."""
        return {name: getattr(self, name) for name in TrialSettings.model_fields}


class TrialSetup(TrialSettings):
    """One trial: its trial settings plus its id, model string, topic, arm, seed and push direction.

    Bad values raise :class:`~pvsst.core.errors.InputError` (source ``trial``) naming the field.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)  # Topic and Protocol are plain dataclasses

    trial_id: str
    model_name: str
    topic: Topic
    condition: str
    seed: int
    push_direction: Literal["support", "oppose"] | None = None
    protocol: Protocol = Protocol()
    block_id: str = ""

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as err:
            raise InputError("trial", *describe_validation_error(err)) from None

    @model_validator(mode="after")
    def _derived(self) -> TrialSetup:
        if self.push_direction is None:
            object.__setattr__(self, "push_direction", default_push_direction(self.seed))
        if self.protocol.initial_stances == "reference" and self.n_agents % 6:
            raise SpecFieldError("n_agents", "the reference stance assignment (protocol initial_stances: reference) "
                                         f"needs a multiple of 6, got {self.n_agents}")
        try:
            self.arm  # validates the condition name (and the number of distributed sources)
        except InputError as err:
            raise SpecFieldError("condition", err.problem) from None
        return self

    @property
    def arm(self) -> Condition:
        return get_condition(self.condition, self.n_distributed_sources)

    @property
    def n_adversaries(self) -> int:
        return self.arm.n_adversaries

    @property
    def expected_adversarial_impressions(self) -> int:
        """One adversary slot per honest feed from round 1 on (12 x 5 = 60 in PV-SST)."""
        return self.n_agents * (self.n_rounds - 1) if self.arm.adversarial else 0
