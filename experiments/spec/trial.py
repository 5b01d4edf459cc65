"""Spec sections that set up one trial: the protocol parameters, the network and the persona source.

Defaults reproduce PV-SST (``shared/reference/pvsst_confirmatory_v1.yaml`` of the PV-SST study): 12 honest agents,
6 rounds, a feed of 5, 5 votes per voter, 3 rounds of memory, 4 distributed adversaries, temperature
0.8, 120 / 70 completion tokens for posts / votes, 180-character posts, 3 attempts per call.
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from experiments.spec.base import Identifier, NonEmptyText, Share, SpecFieldError, StrictModel

NETWORK_PARAMETERS: dict[str, tuple[str, ...]] = {
    "complete": (),
    "erdos_renyi": ("p",),
    "barabasi_albert": ("m",),
    "watts_strogatz": ("k", "p"),
    "sbm": ("attribute", "p", "homophily"),
    "edgelist": ("path",),
}
"""Network kind -> the parameters it requires (and the only ones it accepts)."""

REQUEST_SEED_LIMIT = 2**31 - 1
"""Largest request seed every provider accepts (llama.cpp, OpenAI and vLLM all take a signed int32)."""


class NetworkSpec(StrictModel):
    """The initial follow graph among honest agents (used by the ``follows`` arm and followee feeds).

    Kinds: ``complete`` (everyone follows everyone), ``erdos_renyi`` (tie probability ``p``),
    ``barabasi_albert`` (``m`` ties per new node), ``watts_strogatz`` (ring of ``k`` neighbours, rewiring
    probability ``p``), ``sbm`` (groups by persona ``attribute``; within-group tie probability ``p``,
    between-group ``p * (1 - homophily)``), ``edgelist`` (``source target`` lines of agent ids at
    ``path``, relative to the spec file). Every generator is seeded from the trial seed.

    Examples
    --------
    >>> NetworkSpec(kind="watts_strogatz", k=4, p=0.1).kind
    'watts_strogatz'
    """

    kind: Literal["complete", "erdos_renyi", "barabasi_albert", "watts_strogatz", "sbm", "edgelist"] = "complete"
    p: Share | None = None
    m: Annotated[int, Field(ge=1)] | None = None
    k: Annotated[int, Field(ge=2)] | None = None
    homophily: Share | None = None
    attribute: NonEmptyText | None = None
    path: NonEmptyText | None = None

    @model_validator(mode="after")
    def _parameters_match_kind(self) -> NetworkSpec:
        needed = NETWORK_PARAMETERS[self.kind]
        for name in ("p", "m", "k", "homophily", "attribute", "path"):
            given = getattr(self, name) is not None
            if name in needed and not given:
                raise SpecFieldError(name, f"required by network kind {self.kind!r}")
            if given and name not in needed:
                raise SpecFieldError(name, f"not used by network kind {self.kind!r} (it takes: "
                                           f"{', '.join(needed) or 'no parameters'})")
        return self


class TrialParams(StrictModel):
    """The protocol of one trial; every default is PV-SST's.

    ``request_seed_formula``: ``pvsst`` is PV-SST's ``trial_seed*100000 + round*1000 + phase*500 +
    ordinal`` (distinct seeds only while rounds < 100 and agents + adversaries <= 500); ``hashed`` takes
    31 bits of a sha256 over the four numbers (``sim.seeds.request_seed``), for populations beyond that.
    ``votes_per_voter: 0`` turns voting off (no vote calls); ``follow_dynamics`` follows on a like and
    unfollows on a downvote, so it costs no extra model calls.

    Examples
    --------
    >>> TrialParams().n_agents, TrialParams(n_agents=6, n_rounds=3).feed_size
    (12, 5)
    """

    n_agents: Annotated[int, Field(ge=2)] = 12
    n_rounds: Annotated[int, Field(ge=1)] = 6
    feed_size: Annotated[int, Field(ge=1)] = 5
    votes_per_voter: Annotated[int, Field(ge=0)] = 5
    memory_rounds: Annotated[int, Field(ge=0)] = 3
    n_distributed_sources: Annotated[int, Field(ge=1)] = 4
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] = 0.8
    vote_temperature: Annotated[float, Field(ge=0.0, le=2.0)] = 0.6
    max_tokens: Annotated[int, Field(ge=1)] = 120
    vote_max_tokens: Annotated[int, Field(ge=1)] = 70
    post_char_limit: Annotated[int, Field(ge=1)] = 180
    max_attempts: Annotated[int, Field(ge=1)] = 3
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
    def _network_fits_population(self) -> TrialParams:
        network = self.network
        if network.m is not None and network.m >= self.n_agents:
            raise SpecFieldError("network.m", f"must be below n_agents ({self.n_agents})")
        if network.k is not None and network.k >= self.n_agents:
            raise SpecFieldError("network.k", f"must be below n_agents ({self.n_agents})")
        return self

    def max_request_seed(self, trial_seed: int, n_adversaries: int) -> int:
        """The largest request seed the ``pvsst`` formula gives in a trial (phase 1, last round, last agent)."""
        return trial_seed * 100000 + self.n_rounds * 1000 + 500 + self.n_agents + n_adversaries - 1

    def check_request_seeds(self, seeds: list[int], n_adversaries: int) -> None:
        """Raise :class:`SpecFieldError` when the ``pvsst`` formula would collide or overflow an int32."""
        if self.request_seed_formula != "pvsst":
            return
        if self.n_rounds >= 100:
            raise SpecFieldError("trial.n_rounds", "the 'pvsst' request-seed formula needs fewer than 100 "
                                 "rounds; set trial.request_seed_formula: hashed")
        if self.n_agents + n_adversaries > 500:
            raise SpecFieldError("trial.n_agents", "the 'pvsst' request-seed formula needs at most 500 agents "
                                 "+ adversaries; set trial.request_seed_formula: hashed")
        for index, seed in enumerate(seeds):
            if self.max_request_seed(seed, n_adversaries) > REQUEST_SEED_LIMIT:
                raise SpecFieldError(f"factors.seeds[{index}]", f"seed {seed} makes request seeds above "
                                     f"2**31-1 under the 'pvsst' formula; use seeds below 21474")


class PersonaSpec(StrictModel):
    """Where honest agents' personas come from and how their cards are written.

    ``default``: PV-SST's built-in personas; ``census``: a raked synthetic population of ``n`` records
    for ``geography`` (``US`` or state codes such as ``CA,NY``) drawn with ``seed``; ``file``: persona
    records at ``path`` (Parquet or CSV, relative to the spec file). ``n`` (default: n_agents) is the
    pool each trial samples its agents from; ``seed`` (default: the trial seed) fixes that sample.

    Examples
    --------
    >>> PersonaSpec(source="census", n=1000, geography="CA").card_style
    'pvsst_short'
    """

    source: Literal["default", "census", "file"] = "default"
    n: Annotated[int, Field(ge=1)] | None = None
    geography: Annotated[str, Field(pattern=r"^(US|[A-Z]{2}(,[A-Z]{2})*)$")] | None = None
    seed: Annotated[int, Field(ge=0)] | None = None
    path: NonEmptyText | None = None
    card_style: Literal["pvsst_short", "third_person", "first_person"] = "pvsst_short"

    @model_validator(mode="after")
    def _fields_match_source(self) -> PersonaSpec:
        if self.source == "file" and self.path is None:
            raise SpecFieldError("path", "required when source is 'file'")
        if self.source != "file" and self.path is not None:
            raise SpecFieldError("path", f"only used when source is 'file' (source is {self.source!r})")
        if self.source != "census" and self.geography is not None:
            raise SpecFieldError("geography", f"only used when source is 'census' (source is {self.source!r})")
        return self
