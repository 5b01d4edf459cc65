"""Spec sections that set up one trial: the trial settings, the network and the persona source.

The trial settings and the network are the engine's own models (``pvsst.sim.trial.settings``,
``pvsst.sim.network``): this module adds only the checks that need other spec sections. Defaults reproduce
PV-SST (``tests/data/pvsst_reference/pvsst_confirmatory_v1.yaml``, the PV-SST study's configuration): 12 honest agents,
6 rounds, a feed of 5, 5 votes per voter, 3 rounds of memory, 4 distributed adversaries, temperature
0.8, 120 / 70 completion tokens for posts / votes, 180-character posts, 3 attempts per call.
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from pvsst.core.bounds import MAX_PERSONAS, MAX_SEED
from pvsst.experiments.spec.base import NonEmptyText, SpecFieldError, StrictModel
from pvsst.sim.network import NETWORK_PARAMETERS, NetworkSpec  # noqa: F401 - the spec's network section is the engine's
from pvsst.sim.trial.settings import TrialSettings

REQUEST_SEED_LIMIT = 2**31 - 1
"""Largest request seed every provider accepts (llama.cpp, OpenAI and vLLM all take a signed int32)."""


def max_request_seed(trial: TrialSettings, trial_seed: int, n_adversaries: int) -> int:
    """The largest request seed the ``pvsst`` formula gives in a trial (phase 1, last round, last agent).

    Examples
    --------
    >>> max_request_seed(TrialSettings(), 101, 0)
    10106511
    """
    return trial_seed * 100000 + trial.n_rounds * 1000 + 500 + trial.n_agents + n_adversaries - 1


def check_request_seeds(trial: TrialSettings, seeds: list[int], n_adversaries: int) -> None:
    """Raise :class:`SpecFieldError` when the ``pvsst`` formula would collide or overflow an int32.

    Examples
    --------
    >>> check_request_seeds(TrialSettings(), [101, 307], 4)
    >>> check_request_seeds(TrialSettings(), [30000], 4)
    Traceback (most recent call last):
    ...
    pvsst.core.validation.SpecFieldError: seed 30000 makes request seeds above 2**31-1 under the 'pvsst' formula; ...
    """
    if trial.request_seed_formula != "pvsst":
        return
    if trial.n_rounds >= 100:
        raise SpecFieldError("trial.n_rounds", "the 'pvsst' request-seed formula needs fewer than 100 "
                             "rounds; set trial.request_seed_formula: hashed")
    if trial.n_agents + n_adversaries > 500:
        raise SpecFieldError("trial.n_agents", "the 'pvsst' request-seed formula needs at most 500 agents "
                             "+ adversaries; set trial.request_seed_formula: hashed")
    for index, seed in enumerate(seeds):
        if max_request_seed(trial, seed, n_adversaries) > REQUEST_SEED_LIMIT:
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
    n: Annotated[int, Field(ge=1, le=MAX_PERSONAS)] | None = None
    geography: Annotated[str, Field(pattern=r"^(US|[A-Z]{2}(,[A-Z]{2})*)$")] | None = None
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)] | None = None
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
