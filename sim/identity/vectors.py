"""The identity-vectors artifact: per-layer vectors of demographic attribute values, with provenance.

One ``.npz`` file holds two arrays: ``vectors`` (float32, shape ``(n_entries, n_layers, n_embd)``, row
``k`` the vector of ``header["entries"][k]``, an ``[attribute, value]`` pair, at each stored layer) and
``header`` (the UTF-8 bytes of a JSON object). The header names the format and its version, the model
(name, GGUF file sha256, ``n_layer``, ``n_embd``), the stored layers, the token span the hidden states
were averaged over, the probe set's sha256, the persona sample, each attribute's values with their
persona and prompt counts, the seed and the pvsst version (:func:`pvsst.sim.identity.extraction.extract_vectors`
writes them). The file is written byte-for-byte deterministically (fixed zip timestamps), so the same
extraction gives the same sha256, which a preregistration lock and the response-cache key record.

A vector is ``mean(hidden state | value) - mean(hidden state)`` per layer; the control vector of a
call is built from them by :meth:`IdentityVectors.control_vector` (formula in
:mod:`pvsst.sim.llm.steering`).

Examples
--------
>>> import numpy as np, tempfile, pathlib
>>> header = example_header(entries=[["sex", "female"], ["sex", "male"]], layers=[1, 2], n_layer=3, n_embd=4)
>>> vectors = IdentityVectors(header, np.ones((2, 2, 4), dtype=np.float32))
>>> path = pathlib.Path(tempfile.mkdtemp()) / "v.npz"
>>> sha = save_vectors(vectors, path)
>>> sha == file_sha256(path) == save_vectors(vectors, path)
True
>>> load_vectors(path).attributes
{'sex': ['female', 'male']}
"""
from __future__ import annotations

import functools
import hashlib
import io
import json
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pvsst.core.atomic import atomic_file
from pvsst.core.errors import InputError
from pvsst.core.input_files import file_sha256
from pvsst.sim.llm.steering import Steering

FORMAT = "pvsst-identity-vectors"
FORMAT_VERSION = 1
TOKEN_SPANS = ("user", "prompt", "last")
"""Which prompt tokens a hidden state is averaged over (:func:`pvsst.sim.identity.extraction.span_of`)."""
REQUIRED = ("format", "format_version", "model", "model_sha256", "n_layer", "n_embd", "layers", "token_span",
            "entries", "attributes", "probe_set_sha256", "seed", "pvsst_version")
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True, eq=False)
class IdentityVectors:
    """Vectors of attribute values at stored layers, and the JSON header that says where they come from.

    Constructing one validates it (``InputError``, one line, naming ``source``).
    """

    header: dict[str, Any]
    vectors: np.ndarray
    source: str = "identity vectors"

    def __post_init__(self) -> None:
        validate(self.header, self.vectors, self.source)
        self.vectors.setflags(write=False)

    @property
    def layers(self) -> tuple[int, ...]:
        return tuple(int(layer) for layer in self.header["layers"])

    @property
    def entries(self) -> list[tuple[str, str]]:
        return [(str(a), str(v)) for a, v in self.header["entries"]]

    @property
    def attributes(self) -> dict[str, list[str]]:
        """Each attribute's values that have a vector, in stored order."""
        out: dict[str, list[str]] = {}
        for attribute, value in self.entries:
            out.setdefault(attribute, []).append(value)
        return out

    def vector(self, attribute: str, value: str) -> np.ndarray:
        """The vector of ``attribute = value`` at every stored layer, shape ``(len(layers), n_embd)``."""
        values = self.attributes.get(attribute)
        if values is None:
            raise InputError(self.source, "attributes", f"no vectors for attribute {attribute!r} "
                             f"(it has: {', '.join(self.attributes)})")
        if str(value) not in values:
            raise InputError(self.source, attribute, f"no vector for value {value!r} (values: {', '.join(values)})")
        return self.vectors[self.entries.index((attribute, str(value)))]

    def check_layers(self, layers: Iterable[int]) -> list[int]:
        """Rows of the stored layers for injection ``layers``; ``InputError`` for layer 0, a layer outside
        the model, or one the artifact does not store."""
        n_layer, stored, rows = int(self.header["n_layer"]), self.layers, []
        for layer in layers:
            if not 1 <= layer < n_layer:
                raise InputError(self.source, "layers", f"layer {layer} is out of range: a control vector acts on "
                                 f"layers 1..{n_layer - 1} of this model (llama.cpp steers no layer 0)")
            if layer not in stored:
                raise InputError(self.source, "layers", f"layer {layer} has no stored vector (stored: "
                                 f"{format_layers(stored)})")
            rows.append(stored.index(layer))
        return rows

    def control_vector(self, steering: Steering) -> np.ndarray:
        """``coef * sum of the persona's value vectors + N(0, noise_sigma^2 I)`` at ``steering.layers``:
        float32, shape ``(len(layers), n_embd)``; the noise comes from ``numpy.random.default_rng(noise_seed)``
        (one standard normal per element, row by row).

        Examples
        --------
        >>> header = example_header(entries=[["sex", "female"]], layers=[1, 2], n_layer=3, n_embd=2)
        >>> vectors = IdentityVectors(header, np.array([[[1, 2], [3, 4]]], dtype=np.float32))
        >>> steering = Steering(vectors="v.npz", vectors_sha256="0" * 64, attributes=(("sex", "female"),),
        ...                     layers=(2,), coef=0.5)
        >>> vectors.control_vector(steering).tolist()
        [[1.5, 2.0]]
        """
        rows = self.check_layers(steering.layers)
        total = np.zeros((len(rows), int(self.header["n_embd"])), dtype=np.float64)
        for attribute, value in steering.attributes:
            total += self.vector(attribute, value)[rows]
        total *= steering.coef
        if steering.noise_sigma > 0:
            total += np.random.default_rng(steering.noise_seed).normal(0.0, steering.noise_sigma, total.shape)
        return total.astype(np.float32)


def validate(header: dict[str, Any], vectors: np.ndarray, source: str) -> None:
    """``InputError`` (one line) unless ``header`` and ``vectors`` form a well-formed artifact."""
    if not isinstance(header, dict):
        raise InputError(source, "header", "not a JSON object")
    missing = [key for key in REQUIRED if key not in header]
    if missing:
        raise InputError(source, "header", f"missing {', '.join(missing)}")
    if header["format"] != FORMAT or header["format_version"] != FORMAT_VERSION:
        raise InputError(source, "format", f"expected {FORMAT} version {FORMAT_VERSION}, got "
                         f"{header['format']} version {header['format_version']}")
    if not isinstance(header["model_sha256"], str) or not re.fullmatch(r"[0-9a-f]{64}", header["model_sha256"]):
        raise InputError(source, "model_sha256", "must be 64 lower-case hex digits")
    n_layer, n_embd, layers = header["n_layer"], header["n_embd"], header["layers"]
    if not (isinstance(n_layer, int) and isinstance(n_embd, int) and n_layer > 0 and n_embd > 0):
        raise InputError(source, "n_layer", f"n_layer and n_embd must be positive integers, got {n_layer}, {n_embd}")
    if (not isinstance(layers, list) or not layers or any(not isinstance(x, int) for x in layers)
            or layers != sorted(set(layers))):
        raise InputError(source, "layers", f"must be increasing layer numbers, got {layers}")
    outside = [layer for layer in layers if not 0 <= layer < n_layer]
    if outside:
        raise InputError(source, "layers", f"layer {outside[0]} is out of range 0..{n_layer - 1} for this model")
    if header["token_span"] not in TOKEN_SPANS:
        raise InputError(source, "token_span", f"must be one of {', '.join(TOKEN_SPANS)}, got {header['token_span']!r}")
    entries = header["entries"]
    pairs = [tuple(e) for e in entries if isinstance(e, list) and all(isinstance(x, str) for x in e)] \
        if isinstance(entries, list) else []
    if not pairs or len(pairs) != len(entries) or any(len(p) != 2 for p in pairs) or len(set(pairs)) != len(pairs):
        raise InputError(source, "entries", "must be distinct [attribute, value] pairs of text")
    attributes = header["attributes"]
    if not isinstance(attributes, dict) or not all(isinstance(values, dict) for values in attributes.values()):
        raise InputError(source, "attributes", "must map each attribute to its values' counts")
    counted = {(a, v) for a, values in attributes.items() for v in values}
    if counted != set(pairs):
        raise InputError(source, "attributes", "the counted values differ from the entries")
    expected = (len(pairs), len(layers), n_embd)
    if not isinstance(vectors, np.ndarray) or vectors.dtype != np.float32 or vectors.shape != expected:
        shape = getattr(vectors, "shape", None)
        raise InputError(source, "vectors", f"expected float32 of shape {expected}, got "
                         f"{getattr(vectors, 'dtype', type(vectors).__name__)} of shape {shape}")
    if not np.isfinite(vectors).all():
        row = int(np.argwhere(~np.isfinite(vectors))[0][0])
        raise InputError(source, "vectors", f"non-finite values in the vector of {pairs[row][0]}={pairs[row][1]}")


def check_model(vectors: IdentityVectors, model_sha256: str, model_name: str = "") -> None:
    """``InputError`` unless ``vectors`` were measured on the model file with ``model_sha256``."""
    if vectors.header["model_sha256"] != model_sha256:
        raise InputError(vectors.source, "model_sha256", f"measured on another model file "
                         f"({vectors.header['model_sha256'][:12]}..., {vectors.header['model']}) than "
                         f"{model_name or 'this model'} ({model_sha256[:12]}...)")


def _member(archive: zipfile.ZipFile, name: str, array: np.ndarray) -> None:
    info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
    archive.writestr(info, buffer.getvalue())


def save_vectors(vectors: IdentityVectors, path: str | Path) -> str:
    """Write ``vectors`` to ``path`` (atomically: complete or absent); return the file's sha256."""
    path = Path(path)
    header = json.dumps(vectors.header, sort_keys=True, ensure_ascii=False, indent=1).encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(path) as tmp, zipfile.ZipFile(tmp, "w") as archive:
            _member(archive, "header", np.frombuffer(header, dtype=np.uint8))
            _member(archive, "vectors", vectors.vectors)
    except OSError as err:
        raise InputError(str(path), "--out", f"cannot write the vectors: {err}") from err
    return file_sha256(path)


def load_vectors(path: str | Path, *, sha256: str | None = None, model_sha256: str | None = None) -> IdentityVectors:
    """Read and validate an artifact; with ``sha256`` the file must have that hash, with ``model_sha256``
    the vectors must come from that model file. Every problem is one ``InputError`` line."""
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise InputError(source, "vectors", f"cannot read the vectors file: {err.strerror or err}") from err
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise InputError(source, "vectors_sha256", f"the file's sha256 is {hashlib.sha256(data).hexdigest()[:12]}..., "
                         f"not {sha256[:12]}... (the vectors changed since they were named)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            header = json.loads(bytes(archive["header"]).decode("utf-8"))
            array = archive["vectors"]
    except (ValueError, KeyError, OSError, zipfile.BadZipFile, UnicodeDecodeError) as err:
        raise InputError(source, "vectors", f"not an identity-vectors file (.npz with header and vectors): "
                         f"{str(err).splitlines()[0] if str(err) else type(err).__name__}") from err
    vectors = IdentityVectors(header, array, source)
    if model_sha256 is not None:
        check_model(vectors, model_sha256)
    return vectors


@functools.lru_cache(maxsize=16)
def cached_vectors(path: str, sha256: str, model_sha256: str) -> IdentityVectors:
    """:func:`load_vectors` once per process for each (path, sha256, model file): the content is the
    one with that hash, whatever happens to the file later."""
    return load_vectors(path, sha256=sha256, model_sha256=model_sha256)


_RANGE = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")


def parse_layers(text: str) -> tuple[int, ...]:
    """``"10-14,20"`` -> ``(10, 11, 12, 13, 14, 20)``.

    Examples
    --------
    >>> parse_layers("10-12, 20"), format_layers((10, 11, 12, 20))
    ((10, 11, 12, 20), '10-12,20')
    """
    layers: set[int] = set()
    for part in str(text).split(","):
        match = _RANGE.fullmatch(part)
        if match is None or (match[2] is not None and int(match[2]) < int(match[1])):
            raise InputError("layers", str(text), "expected layer numbers and ranges such as 10-14,20")
        layers.update(range(int(match[1]), int(match[2] or match[1]) + 1))
    return tuple(sorted(layers))


def format_layers(layers: Iterable[int]) -> str:
    """The shortest ``a-b,c`` form of a set of layers (inverse of :func:`parse_layers`)."""
    out, run = [], []
    for layer in sorted(set(layers)):
        if run and layer != run[-1] + 1:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = []
        run.append(layer)
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def example_header(*, entries: list[list[str]], layers: list[int], n_layer: int, n_embd: int) -> dict[str, Any]:
    """A minimal valid header (one persona and prompt per value): for examples and tests."""
    attributes: dict[str, dict[str, dict[str, int]]] = {}
    for attribute, value in entries:
        attributes.setdefault(attribute, {})[value] = {"personas": 1, "prompts": 1}
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "model": "example", "model_sha256": "0" * 64,
            "n_layer": n_layer, "n_embd": n_embd, "layers": list(layers), "token_span": "user",
            "entries": [list(e) for e in entries], "attributes": attributes, "probe_set_sha256": "0" * 64,
            "seed": 0, "pvsst_version": "example"}
