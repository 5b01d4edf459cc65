"""The ``execution`` section of study specs and survey instruments: executor, workers and the gateway.

The gateway's settings (concurrency, pacing, timeout, model servers, structured output) are those of
:class:`~pvsst.sim.llm.config.GatewayConfig`, with their defaults and bounds; this section adds how
the units are run: the executor, its workers, a Ray cluster, and the units of a survey's run.
``chunk_size`` is a survey instrument's setting and the executor ``ray`` a study's: each document
checks the other's is unset (:meth:`Execution.check_study`, :meth:`Execution.check_survey`).

Examples
--------
>>> execution = Execution.model_validate({"workers": 2, "endpoints": [{"api_base": "http://a:8000/v1"}]})
>>> execution.workers, execution.gateway_config().endpoints[0].api_base
(2, 'http://a:8000/v1')
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from pvsst.core.bounds import MAX_CHUNK, MAX_WORKERS
from pvsst.core.validation import NonEmptyText, SpecFieldError
from pvsst.sim.llm.config import GatewayConfig

STUDY_ONLY_DEFAULTS = {"executor": "local", "ray_address": None, "requests_per_minute": None}
"""Settings a survey instrument's canonical form leaves out while at these defaults (instruments were
first frozen without them)."""
SURVEY_ONLY_DEFAULTS = {"chunk_size": 50}
"""Settings a study spec's canonical form leaves out while at these defaults (specs were first frozen
without them)."""


class Execution(GatewayConfig):
    """How a run executes: the gateway's settings and the executor (``pvsst run`` options override them)."""

    executor: Literal["local", "ray"] = "local"
    workers: Annotated[int, Field(ge=1, le=MAX_WORKERS)] = 1
    ray_address: NonEmptyText | None = None
    chunk_size: Annotated[int, Field(ge=1, le=MAX_CHUNK)] = 50

    @model_validator(mode="after")
    def _consistent(self) -> Execution:
        if self.ray_address is not None and self.executor != "ray":
            raise SpecFieldError("ray_address", "only used with executor 'ray'")
        return self

    def check_study(self) -> None:
        """A study runs trials, not survey units: ``chunk_size`` is not its setting."""
        if "chunk_size" in self.model_fields_set and self.chunk_size != SURVEY_ONLY_DEFAULTS["chunk_size"]:
            raise SpecFieldError("execution.chunk_size", "only used by survey instruments")

    def check_survey(self) -> None:
        """A survey's units run on the local executor."""
        if self.executor != "local":
            raise SpecFieldError("execution.executor", "survey instruments run on the local executor")


def drop_defaults(execution: dict, defaults: dict) -> dict:
    """``execution`` (dumped) without the ``defaults`` keys that hold their default value."""
    return {key: value for key, value in execution.items() if key not in defaults or value != defaults[key]}
