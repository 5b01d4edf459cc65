"""How one model call is steered: the identity-injection settings a request carries to the embedded model.

A :class:`Steering` names a vectors artifact (:mod:`pvsst.sim.identity.vectors`) by path and sha256,
the persona's attribute values, the injection layers, a coefficient, the noise and the scope. The
embedded provider builds the control vector from it, deterministically:

``v[l] = coef * sum over the persona's (attribute, value) of vector[attribute, value][l] + noise[l]``,
``noise ~ N(0, noise_sigma^2 I)`` drawn from ``noise_seed`` (one row per injection layer, in layer order),

and adds ``v[l]`` to the output of transformer block ``l`` (the residual stream where the vector was
measured) for the tokens of its ``scope``:

- ``prompt``: while the prompt is evaluated (chat template and generation header included); tokens
  the model generates afterwards are evaluated without it (they still attend to the steered prompt).
- ``response``: only for the tokens after the prompt: generated tokens, and under ``logprobs``
  elicitation the forced answer opening ``{"answer": "`` and the option tokens.
- ``all``: for every token.

The request carries it through litellm as the keyword :data:`STEERING_FIELD` (a JSON object,
:meth:`Steering.to_dict`); :meth:`Steering.digest` (the artifact's sha256, never its path) enters the
request's response-cache key.

Examples
--------
>>> steering = Steering(vectors="v.npz", vectors_sha256="0" * 64, attributes=(("sex", "female"),),
...                     layers=(10, 11), coef=2.0)
>>> Steering.from_dict(steering.to_dict()) == steering
True
>>> len(steering.digest())
64
"""
from __future__ import annotations

import hashlib
import math
import re
from dataclasses import asdict, dataclass
from typing import Any

from pvsst.core.errors import InputError
from pvsst.sim.llm.types import canonical_json

SCOPES = ("prompt", "response", "all")
"""Which tokens a control vector is added to (see the module text)."""
STEERING_FIELD = "pvsst_steering"
"""The keyword that carries a :class:`Steering` (as :meth:`Steering.to_dict`) through litellm."""
SOURCE = "identity injection"
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Steering:
    """The identity-injection settings of one call (see the module text for the vector they give).

    ``attributes`` is stored sorted by attribute; ``layers`` sorted, each once. Bad values raise
    ``InputError`` (one line).

    Examples
    --------
    >>> Steering(vectors="v.npz", vectors_sha256="0" * 64, attributes=(("sex", "male"), ("age_band", "30-44")),
    ...          layers=(12, 10)).attributes
    (('age_band', '30-44'), ('sex', 'male'))
    >>> Steering(vectors="v.npz", vectors_sha256="0" * 64, attributes=(), layers=(10,), scope="reply")
    Traceback (most recent call last):
    ...
    pvsst.core.errors.InputError: identity injection: scope: must be one of prompt, response, all, got 'reply'
    """

    vectors: str
    vectors_sha256: str
    attributes: tuple[tuple[str, str], ...]
    layers: tuple[int, ...]
    coef: float = 1.0
    noise_sigma: float = 0.0
    noise_seed: int = 0
    scope: str = "all"

    def __post_init__(self) -> None:
        if not _SHA256.fullmatch(str(self.vectors_sha256)):
            raise InputError(SOURCE, "vectors_sha256", f"must be 64 lower-case hex digits, got {self.vectors_sha256!r}")
        pairs = tuple(sorted((str(a), str(v)) for a, v in self.attributes))
        names = [a for a, _ in pairs]
        if len(set(names)) != len(names):
            raise InputError(SOURCE, "attributes", f"an attribute is given twice: {names}")
        if not self.layers or any(isinstance(layer, bool) or int(layer) != layer for layer in self.layers):
            raise InputError(SOURCE, "layers", f"must be one or more layer numbers, got {list(self.layers)}")
        layers = tuple(sorted({int(layer) for layer in self.layers}))
        for name in ("coef", "noise_sigma"):
            value = float(getattr(self, name))
            if not math.isfinite(value):
                raise InputError(SOURCE, name, f"must be a finite number, got {value}")
            object.__setattr__(self, name, value)
        if self.noise_sigma < 0:
            raise InputError(SOURCE, "noise_sigma", f"must be >= 0, got {self.noise_sigma}")
        if self.scope not in SCOPES:
            raise InputError(SOURCE, "scope", f"must be one of {', '.join(SCOPES)}, got {self.scope!r}")
        object.__setattr__(self, "vectors", str(self.vectors))
        object.__setattr__(self, "attributes", pairs)
        object.__setattr__(self, "layers", layers)
        object.__setattr__(self, "noise_seed", int(self.noise_seed))

    def to_dict(self) -> dict[str, Any]:
        """A JSON object of every field (``attributes`` as ``{attribute: value}``)."""
        out = asdict(self)
        out["attributes"] = dict(self.attributes)
        out["layers"] = list(self.layers)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Steering":
        """The inverse of :meth:`to_dict`."""
        try:
            fields = dict(data)
            fields["attributes"] = tuple(dict(fields.get("attributes") or {}).items())
            fields["layers"] = tuple(fields.get("layers") or ())
            return cls(**fields)
        except TypeError as err:
            raise InputError(SOURCE, STEERING_FIELD, f"not a steering object: {err}") from err

    def digest(self) -> str:
        """sha256 over everything that sets the control vector and where it acts: the artifact's
        sha256 (not its path, so a moved file keeps its cache keys), values, layers, coef, noise, scope."""
        payload = self.to_dict()
        del payload["vectors"]
        return hashlib.sha256(canonical_json(payload).encode()).hexdigest()
