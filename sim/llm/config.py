"""The gateway configuration: the one model of every setting a :class:`~pvsst.sim.llm.gateway.Gateway` is built from.

It is the gateway part of the ``execution`` section of study specs and survey instruments, and what
the commands' options override (:meth:`GatewayConfig.with_options`); every default and bound is here.
``api_base`` is one model server; ``endpoints`` are many, routed by litellm's Router (load balancing,
cooldown of a failing server, retry on another). ``structured_output`` says how a reply's JSON is asked
for: one setting for every model, or one per model (see :mod:`pvsst.sim.llm.structured_modes`); a
model it does not name takes ``auto`` when served and ``json_schema`` when embedded or scripted.
``endpoints`` and ``structured_output`` are left out of the dumped form while unset, so the hash of a
document that does not use them is what it was before they existed.

Examples
--------
>>> config = GatewayConfig.model_validate({"endpoints": [{"api_base": "http://a:8000/v1", "weight": 2},
...                                                      {"api_base": "http://b:8000/v1", "max_concurrency": 8}],
...                                        "structured_output": {"openai/smollm2": "auto"}})
>>> [e.api_base for e in config.endpoints], config.structured_output_for("openai/smollm2")
(['http://a:8000/v1', 'http://b:8000/v1'], 'auto')
>>> config.structured_output_for("openai/other"), config.structured_output_for("embedded/smollm2-135m")
('auto', 'json_schema')
>>> GatewayConfig().with_options(max_concurrency=2, request_timeout_s=None).max_concurrency
2
"""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from pvsst.core.bounds import MAX_CONCURRENCY, MAX_REQUESTS_PER_MINUTE
from pvsst.core.defaults import DEFAULT_MAX_CONCURRENCY, DEFAULT_TIMEOUT_S
from pvsst.core.errors import InputError
from pvsst.core.validation import NonEmptyText, SpecFieldError, StrictModel, describe_validation_error, require_unique
from pvsst.sim.llm.structured_modes import SETTINGS, default_setting


class Endpoint(StrictModel):
    """One OpenAI-compatible model server (vLLM, Ollama, llama.cpp, ...): its ``api_base``, a routing
    ``weight`` and the most requests it gets at once (``max_concurrency``; ``None``: only the gateway's).

    Examples
    --------
    >>> Endpoint(api_base="http://127.0.0.1:8000/v1", weight=2).weight
    2.0
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_base: NonEmptyText
    weight: Annotated[float, Field(gt=0)] = 1.0
    max_concurrency: Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)] | None = None


class GatewayConfig(StrictModel):
    """How the gateway calls the models: concurrency, pacing, timeout, model servers, structured output."""

    max_concurrency: Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)] = DEFAULT_MAX_CONCURRENCY
    requests_per_minute: Annotated[int, Field(ge=1, le=MAX_REQUESTS_PER_MINUTE)] | None = None
    request_timeout_s: Annotated[float, Field(gt=0)] = DEFAULT_TIMEOUT_S
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
            if mode not in SETTINGS:
                raise SpecFieldError(where, f"unknown structured-output mode {mode!r} (known: {', '.join(SETTINGS)})")
        return value

    @model_validator(mode="after")
    def _one_server_setting(self) -> "GatewayConfig":
        if self.endpoints is not None:
            if self.api_base is not None:
                raise SpecFieldError("endpoints", "give api_base (one server) or endpoints (many), not both")
            require_unique([endpoint.api_base.rstrip("/") for endpoint in self.endpoints], where="endpoints",
                           suffix=".api_base")
        return self

    def structured_output_for(self, model: str) -> str:
        """The structured-output setting of ``model``
        (unset: :func:`~pvsst.sim.llm.structured_modes.default_setting`)."""
        if isinstance(self.structured_output, dict):
            return self.structured_output.get(model, default_setting(model))
        return self.structured_output or default_setting(model)

    def check_models(self, models: list[str] | tuple[str, ...], where: str = "factors.models") -> None:
        """Every model named in a per-model ``structured_output`` is one of ``models``."""
        if isinstance(self.structured_output, dict):
            for model in self.structured_output:
                if model not in models:
                    raise SpecFieldError(f"execution.structured_output.{model}",
                                         f"{model!r} is not in {where} ({', '.join(models)})")

    def total_concurrency(self) -> int | None:
        """Requests the endpoints take at once together (None when any endpoint sets no limit)."""
        if not self.endpoints or any(e.max_concurrency is None for e in self.endpoints):
            return None
        return sum(e.max_concurrency for e in self.endpoints)

    def gateway_config(self) -> "GatewayConfig":
        """Only the gateway's settings (a subclass, such as a document's ``execution``, adds others)."""
        return GatewayConfig.model_validate({name: getattr(self, name) for name in GatewayConfig.model_fields})

    def with_options(self, source: str = "command line", **options: Any) -> "GatewayConfig":
        """This configuration with the options that were given (not ``None``) in place, validated again.

        Raises ``InputError`` naming ``source`` and the field when a value is out of bounds.
        """
        given = {name: value for name, value in options.items() if value is not None}
        unknown = sorted(set(given) - set(type(self).model_fields))
        if unknown:
            raise TypeError(f"not a gateway setting: {', '.join(unknown)}")
        try:
            return type(self).model_validate({**self.model_dump(), **given})
        except ValidationError as err:
            raise InputError(source, *describe_validation_error(err)) from None
