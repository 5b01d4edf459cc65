"""The spec's ``execution`` section: executor, concurrency, model servers, structured output.

``api_base`` is one model server; ``endpoints`` are many, routed by litellm's Router (load balancing,
cooldown of a failing server, retry on another). ``structured_output`` says how a reply's JSON is
asked for: one setting for every model, or one per model (see :mod:`pvsst.sim.llm.structured_modes`); a
model it does not name takes ``auto`` when served and ``json_schema`` when embedded or scripted.
Fields added here are left out of the canonical form while at their defaults, so the hash of a spec
that does not use them is what it was before they existed.

Examples
--------
>>> execution = Execution.model_validate({"endpoints": [{"api_base": "http://a:8000/v1", "weight": 2},
...                                                     {"api_base": "http://b:8000/v1", "max_concurrency": 8}],
...                                       "structured_output": {"openai/smollm2": "auto"}})
>>> [e.api_base for e in execution.endpoints], execution.structured_output_for("openai/smollm2")
(['http://a:8000/v1', 'http://b:8000/v1'], 'auto')
>>> execution.structured_output_for("openai/other"), execution.structured_output_for("embedded/smollm2-135m")
('auto', 'json_schema')
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from pvsst.experiments.spec.base import NonEmptyText, SpecFieldError, StrictModel
from pvsst.core.validation import require_unique

STRUCTURED_OUTPUT = ("json_schema", "json_object", "json_mode", "none", "auto")


class Endpoint(StrictModel):
    """One OpenAI-compatible model server (vLLM, Ollama, llama.cpp, ...)."""

    api_base: NonEmptyText
    weight: Annotated[float, Field(gt=0)] = 1.0
    max_concurrency: Annotated[int, Field(ge=1)] | None = None


class Execution(StrictModel):
    """Defaults for how the runner executes (``pvsst run`` options override them)."""

    executor: Literal["local", "ray"] = "local"
    workers: Annotated[int, Field(ge=1)] = 1
    ray_address: NonEmptyText | None = None
    max_concurrency: Annotated[int, Field(ge=1)] = 4
    requests_per_minute: Annotated[int, Field(ge=1)] | None = None
    request_timeout_s: Annotated[float, Field(gt=0)] = 240.0
    api_base: NonEmptyText | None = None
    endpoints: Annotated[list[Endpoint], Field(min_length=1)] | None = Field(
        None, exclude_if=lambda value: value is None)
    structured_output: str | dict[str, str] | None = Field(None, exclude_if=lambda value: value is None)

    @field_validator("structured_output")
    @classmethod
    def _known_modes(cls, value: str | dict[str, str] | None) -> str | dict[str, str] | None:
        if value is None:
            return value
        for where, mode in ([("", value)] if isinstance(value, str) else list(value.items())):
            if mode not in STRUCTURED_OUTPUT:
                raise SpecFieldError(where, f"unknown structured-output mode {mode!r} (known: "
                                     f"{', '.join(STRUCTURED_OUTPUT)})")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Execution:
        if self.ray_address is not None and self.executor != "ray":
            raise SpecFieldError("ray_address", "only used with executor 'ray'")
        if self.endpoints is not None:
            if self.api_base is not None:
                raise SpecFieldError("endpoints", "give api_base (one server) or endpoints (many), not both")
            require_unique([endpoint.api_base.rstrip("/") for endpoint in self.endpoints], where="endpoints",
                           suffix=".api_base")
        return self

    def structured_output_for(self, model: str) -> str:
        """The structured-output setting of ``model`` (unset: :func:`~pvsst.sim.llm.structured_modes.default_setting`)."""
        from pvsst.sim.llm.structured_modes import default_setting

        if isinstance(self.structured_output, dict):
            return self.structured_output.get(model, default_setting(model))
        return self.structured_output or default_setting(model)

    def check_models(self, models: list[str]) -> None:
        """Every model named in a per-model ``structured_output`` is a model of the study."""
        if isinstance(self.structured_output, dict):
            for model in self.structured_output:
                if model not in models:
                    raise SpecFieldError(f"execution.structured_output.{model}",
                                         f"{model!r} is not in factors.models ({', '.join(models)})")

    def endpoint_list(self) -> tuple[tuple[str, float, int | None], ...]:
        """The endpoints as plain tuples ``(api_base, weight, max_concurrency)`` (empty: none)."""
        return tuple((e.api_base, e.weight, e.max_concurrency) for e in self.endpoints or ())

    def total_concurrency(self) -> int | None:
        """Requests the endpoints take at once together (None when any endpoint sets no limit)."""
        if not self.endpoints or any(e.max_concurrency is None for e in self.endpoints):
            return None
        return sum(e.max_concurrency for e in self.endpoints)
