"""Each persona's steering: its attribute values, the shared injection settings and its own noise seed.

:func:`persona_steerings` turns a persona table and a vectors artifact into one
:class:`~pvsst.sim.llm.steering.Steering` per persona, checking everything a run would otherwise find out
call by call: the artifact (readable, measured on the model file given), the layers, each attribute
(a column of the table and an attribute of the artifact) and each value (one with a vector). A persona
without a value for an attribute gets no vector for it.

Examples
--------
>>> noise_seed_for(7, "p0000001") == noise_seed_for(7, "p0000001") != noise_seed_for(8, "p0000001")
True
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from pvsst.core.errors import InputError
from pvsst.core.input_files import file_sha256
from pvsst.sim.identity.vectors import load_vectors
from pvsst.sim.llm.steering import Steering


def noise_seed_for(seed: int, persona_id: str) -> int:
    """A persona's noise seed: the first 31 bits of sha256 over (master seed, persona id), so a persona's
    noise does not change when others are added or removed."""
    digest = hashlib.sha256(f"{int(seed)}:identity-noise:{persona_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def persona_steerings(personas: pd.DataFrame, vectors_path: str | Path, *, attributes: Sequence[str],
                      layers: Sequence[int], coef: float, noise_sigma: float = 0.0, scope: str = "all",
                      seed: int = 0, model_sha256: str | None = None) -> dict[str, Steering]:
    """``{persona_id: Steering}`` for every row of ``personas`` (see the module text); ``InputError``
    (one line) for the first problem found, before any model call.

    Parameters
    ----------
    personas
        ``persona_id`` and the attribute columns.
    vectors_path
        The artifact; its sha256 is taken now and travels with every steering.
    model_sha256
        The sha256 of the model file the calls will run on (the artifact must come from it).
    """
    try:
        sha256 = file_sha256(vectors_path)
    except OSError:
        sha256 = None  # load_vectors says what is wrong with the file
    vectors = load_vectors(vectors_path, sha256=sha256, model_sha256=model_sha256)
    attributes = list(attributes)
    if not attributes:
        raise InputError(str(vectors_path), "attributes", "name at least one attribute to inject")
    for attribute in attributes:
        if attribute not in personas.columns:
            raise InputError("personas", attribute, f"the persona table has no column {attribute!r} "
                             f"(columns: {', '.join(map(str, personas.columns))})")
        if attribute not in vectors.attributes:
            raise InputError(str(vectors_path), "attributes", f"no vectors for attribute {attribute!r} "
                             f"(it has: {', '.join(vectors.attributes)})")
    vectors.check_layers(layers)
    out = {}
    for row in personas[["persona_id", *attributes]].itertuples(index=False):
        persona_id, values = str(row[0]), row[1:]
        pairs = tuple((a, str(v)) for a, v in zip(attributes, values) if not pd.isna(v))
        for attribute, value in pairs:
            vectors.vector(attribute, value)  # raises for a value without a vector
        out[persona_id] = Steering(vectors=str(vectors_path), vectors_sha256=sha256, attributes=pairs,
                                   layers=tuple(layers), coef=coef, noise_sigma=noise_sigma,
                                   noise_seed=noise_seed_for(seed, persona_id), scope=scope)
    return out
