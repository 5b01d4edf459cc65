"""The parameters of one trial. Defaults reproduce PV-SST (12 agents, 6 rounds, feed 5, votes 5, ...).

Examples
--------
>>> from sim.topics import get_topic
>>> cfg = TrialConfig(trial_id="t1", model_name="scripted/imitate", topic=get_topic("ai_labels"),
...                   condition="likes", seed=101)
>>> cfg.push_direction, cfg.n_agents, cfg.n_rounds
('support', 12, 6)
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sim.conditions import Condition, get_condition
from personas.errors import InputError
from sim.feeds import FEED_CANDIDATES
from sim.network import NetworkSpec
from sim.protocol import Protocol
from sim.seeds import REQUEST_SEED_FORMULAS
from sim.topics import Topic

# PV-SST counterbalances the push direction by seed; other seeds alternate by parity.
PVSST_PUSH_BY_SEED = {101: "support", 307: "support", 211: "oppose", 419: "oppose"}


def default_push_direction(seed: int) -> str:
    """PV-SST's map for its four seeds (101, 307 support; 211, 419 oppose); odd seeds support otherwise."""
    return PVSST_PUSH_BY_SEED.get(int(seed), "support" if int(seed) % 2 else "oppose")


@dataclass(frozen=True)
class TrialConfig:
    trial_id: str
    model_name: str
    topic: Topic
    condition: str
    seed: int
    push_direction: str | None = None
    n_agents: int = 12
    n_rounds: int = 6
    feed_size: int = 5
    votes_per_voter: int = 5
    memory_rounds: int = 3
    n_distributed_sources: int = 4
    temperature: float = 0.8
    vote_temperature: float = 0.6
    max_tokens: int = 120
    vote_max_tokens: int = 70
    post_char_limit: int = 180
    initial_confidence: float = 0.70
    adversary_confidence: float = 0.85
    request_seed_formula: str = "pvsst"
    network: NetworkSpec = field(default_factory=NetworkSpec)
    feed_candidates: str = "population"
    follow_dynamics: bool = False
    prompt_version: str = "v1"
    protocol: Protocol = field(default_factory=Protocol)
    block_id: str = ""

    def __post_init__(self) -> None:
        if self.push_direction is None:
            object.__setattr__(self, "push_direction", default_push_direction(self.seed))
        checks = [
            ("n_agents", self.n_agents >= 2, "must be >= 2"),
            ("n_rounds", self.n_rounds >= 1, "must be >= 1"),
            ("feed_size", self.feed_size >= 1, "must be >= 1"),
            ("votes_per_voter", self.votes_per_voter >= 0, "must be >= 0"),
            ("memory_rounds", self.memory_rounds >= 0, "must be >= 0"),
            ("n_distributed_sources", self.n_distributed_sources >= 1, "must be >= 1"),
            ("temperature", 0.0 <= self.temperature <= 2.0, "must be in [0, 2]"),
            ("vote_temperature", 0.0 <= self.vote_temperature <= 2.0, "must be in [0, 2]"),
            ("max_tokens", self.max_tokens >= 1, "must be >= 1"),
            ("vote_max_tokens", self.vote_max_tokens >= 1, "must be >= 1"),
            ("post_char_limit", self.post_char_limit >= 1, "must be >= 1"),
            ("initial_confidence", 0.0 <= self.initial_confidence <= 1.0, "must be in [0, 1]"),
            ("adversary_confidence", 0.0 <= self.adversary_confidence <= 1.0, "must be in [0, 1]"),
            ("push_direction", self.push_direction in ("support", "oppose"), "must be support or oppose"),
            ("request_seed_formula", self.request_seed_formula in REQUEST_SEED_FORMULAS,
             f"must be one of {', '.join(REQUEST_SEED_FORMULAS)}"),
            ("feed_candidates", self.feed_candidates in FEED_CANDIDATES,
             f"must be one of {', '.join(FEED_CANDIDATES)}"),
        ]
        if self.protocol.initial_stances == "reference" and self.n_agents % 6:
            checks.append(("n_agents", False, "the reference stance assignment (protocol initial_stances: "
                           "reference) needs a multiple of 6"))
        for name, ok, problem in checks:
            if not ok:
                raise InputError("trial", name, f"{problem}, got {getattr(self, name)!r}")
        self.arm  # validates the condition name

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
