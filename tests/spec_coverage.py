"""Harness of the spec-coverage tests: walk a schema's leaf fields, run a tiny study, fingerprint what it did.

A *leaf* is a field whose type holds no pydantic model; list items are written ``[]`` and mapping
values ``{}`` (``hypotheses[].metric``, ``analysis.contrasts{}.treatment``). A run is fingerprinted in
three parts, so a test can ask whether a change reached the part it governs:

- ``requests``: every request the gateway handed to a provider (every field of the request but its
  provenance tags: model, messages, schema, sampling, JSON mode, ...; the attempt seed, timeout, api
  base), the settings each gateway was built with (concurrency, pacing, attempts) and how the executor
  was asked for (kind, workers, Ray address), recorded in-process: a process pool or Ray executor is
  recorded and replaced by the in-process one;
- ``store``: every trial's tables and ``metrics.json`` and the manifest, minus times, versions,
  latencies and the manifest's own copy of the spec (which would make every field "reach" the store);
- ``analysis``: every table of ``RUN/analysis/`` and the report's hypothesis verdicts; ``numbers`` is the
  same without the columns that only echo a setting (``SETTING_ECHO_COLUMNS``), so a test can ask
  that a setting changed a result, not only the record of it.
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import json
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from pydantic import BaseModel

TIMING_KEYS = {"elapsed_seconds", "elapsed_s", "latency_s", "started_at", "finished_at", "at", "frozen_at",
               "created_at", "versions", "summary"}
# The manifest's record of the spec itself: a copy of the input, not an effect of it.
SPEC_COPY_KEYS = {"spec", "spec_sha256", "frozen_sha256", "spec_path", "spec_id"}
# metrics.json / manifest records of the protocol section (copies of the setting, not effects of it)
PROTOCOL_COPY_KEYS = {"protocol", "protocol_overrides", "similarity_edge_cases"}
NOT_COMPARED_CALL_COLUMNS = ("latency_s", "cached")
# LLMRequest fields that only label a call's provenance record; everything else is what is sent.
REQUEST_TAGS = ("trial_id", "round", "agent_id", "phase")
# Analysis columns that only echo a setting (the record of the value used, which every row must carry);
# the ``numbers`` fingerprint leaves them out, so a change there shows the setting changed a result.
SETTING_ECHO_COLUMNS = ("randomization_draws", "bootstrap_draws", "bootstrap_seed", "alpha", "multiplicity",
                        "min_model_share", "min_topic_share", "threshold")


def leaf_paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Dotted paths of every leaf field of ``model`` (recursing through nested models, lists, dicts).

    >>> from pvsst.experiments.spec.study import StudySpec
    >>> paths = leaf_paths(StudySpec)
    >>> paths[0], paths[4], [p for p in paths if p.startswith("analysis.contrasts")]  # doctest: +NORMALIZE_WHITESPACE
    ('spec_version', 'hypotheses[].id', ['analysis.contrasts{}.name', 'analysis.contrasts{}.treatment',
     'analysis.contrasts{}.control', 'analysis.contrasts{}.metrics'])
    """
    paths = []
    for name, info in model.model_fields.items():
        path = f"{prefix}.{name}" if prefix else name
        inner, suffix = _model_inside(info.annotation)
        if inner is None:
            paths.append(path)
        else:
            paths.extend(leaf_paths(inner, path + suffix))
    return paths


def _model_inside(annotation: Any, suffix: str = "") -> tuple[type[BaseModel] | None, str]:
    """The pydantic model an annotation holds and how it is reached: ``""``, ``"[]"`` or ``"{}"``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, suffix
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, tuple):
        return _first_model(args, suffix + "[]")
    if origin is dict:
        return _model_inside(args[1], suffix + "{}") if len(args) == 2 else (None, suffix)
    return _first_model(args, suffix)


def _first_model(args, suffix: str) -> tuple[type[BaseModel] | None, str]:
    for arg in args:
        found, reached = _model_inside(arg, suffix)
        if found is not None:
            return found, reached
    return None, suffix


def set_path(data: dict, path: str, value: Any) -> None:
    """Set ``a.b[0].c`` (list index) or ``a.b{key}.c`` (mapping key) in nested dicts, creating mappings.

    >>> d = {"a": [{"b": 1}], "m": {"k": {"v": 1}}}
    >>> set_path(d, "a[0].b", 2); set_path(d, "m{k}.v", 3); set_path(d, "n.o", 4)
    >>> d
    {'a': [{'b': 2}], 'm': {'k': {'v': 3}}, 'n': {'o': 4}}
    """
    parts = _split(path)
    node = data
    for part in parts[:-1]:
        node = node[part] if isinstance(part, int) or part in node else node.setdefault(part, {})
    node[parts[-1]] = value


def _split(path: str) -> list:
    parts: list = []
    for piece in path.split("."):
        while piece:
            if piece[0] == "[":
                end = piece.index("]")
                parts.append(int(piece[1:end]))
                piece = piece[end + 1:]
            elif piece[0] == "{":
                end = piece.index("}")
                parts.append(piece[1:end])
                piece = piece[end + 1:]
            else:
                cut = min([i for i in (piece.find("["), piece.find("{")) if i >= 0] or [len(piece)])
                parts.append(piece[:cut])
                piece = piece[cut:]
    return parts


def with_patch(base: dict, patch: dict[str, Any]) -> dict:
    """A deep copy of ``base`` with each ``path: value`` of ``patch`` set (value ``DELETE`` removes it)."""
    data = copy.deepcopy(base)
    for path, value in patch.items():
        if value is DELETE:
            parts = _split(path)
            node = data
            for part in parts[:-1]:
                node = node[part]
            node.pop(parts[-1], None)
        else:
            set_path(data, path, copy.deepcopy(value))
    return data


DELETE = object()


# --- the gateway's settings, shared by study specs and survey instruments ---------------------------

ENDPOINTS = {"execution.endpoints": [{"api_base": "http://127.0.0.1:9"}, {"api_base": "http://127.0.0.1:10"}]}
GATEWAY_CHANGES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "execution.endpoints[].api_base": ({"execution.endpoints[0].api_base": "http://127.0.0.1:8"}, ENDPOINTS),
    "execution.endpoints[].weight": ({"execution.endpoints[0].weight": 2.0}, ENDPOINTS),
    "execution.endpoints[].max_concurrency": ({"execution.endpoints[0].max_concurrency": 3}, ENDPOINTS),
    "execution.structured_output": ({"execution.structured_output": "json_object"}, {}),
    "execution.requests_per_minute": ({"execution.requests_per_minute": 1_000_000}, {}),
    "execution.request_timeout_s": ({"execution.request_timeout_s": 100.0}, {}),
    "execution.api_base": ({"execution.api_base": "http://127.0.0.1:9"}, {}),
}
"""Field -> (another valid value, the setting it needs): each reaches the requests."""


# --- running and fingerprinting ---------------------------------------------------------------------


class RequestRecorder:
    """Records what reaches the providers and the gateways (patched in with pytest's monkeypatch)."""

    def __init__(self, monkeypatch):
        import pvsst.sim.llm.gateway as gateway_module
        import pvsst.sim.llm.mode_sender as sender_module

        self.calls: list[str] = []
        self.gateways: list[str] = []
        real_call, real_init = sender_module.call_provider, gateway_module.Gateway.__init__
        recorder = self

        async def recording_call(request, seed, *, timeout_s, api_base, mode="json_schema", pool=None):
            sent = {k: v for k, v in dataclasses.asdict(request).items() if k not in REQUEST_TAGS}
            endpoints = [e.model_dump() for e in pool.endpoints] if pool is not None else None
            recorder.calls.append(json.dumps({**sent, "seed": seed, "timeout_s": timeout_s, "api_base": api_base,
                                              "mode": mode, "endpoints": endpoints}, sort_keys=True, default=str))
            return await real_call(request, seed, timeout_s=timeout_s, api_base=api_base, mode=mode, pool=pool)

        def recording_init(self_, *args, **kwargs):
            shown = {k: v for k, v in kwargs.items() if k != "cache"}
            if args:  # Gateway(config, cache, ...): the config, never the cache
                shown["config"] = args[0]
            recorder.gateways.append(json.dumps(shown, sort_keys=True, default=str))
            real_init(self_, *args, **kwargs)

        monkeypatch.setattr(sender_module, "call_provider", recording_call)
        monkeypatch.setattr(gateway_module.Gateway, "__init__", recording_init)

        import pvsst.experiments.run.executors as executors

        class RecordedPool(executors.InlineExecutor):
            """Stands in for a process pool or Ray: records how it was asked for, runs in-process
            (that pools and Ray give byte-identical stores is tested in tests/experiments/test_study_runner*.py)."""

            def __init__(self, workers, address=None, kind="local"):
                recorder.gateways.append(json.dumps({"executor": kind, "workers": workers, "address": address}))

        monkeypatch.setattr(executors, "LocalExecutor", lambda workers: RecordedPool(workers))
        monkeypatch.setattr(executors, "RayExecutor",
                            lambda workers, address=None: RecordedPool(workers, address, "ray"))

    @contextlib.contextmanager
    def capture(self) -> Iterator[dict]:
        """Collect the records of one run into the yielded dict (key ``requests``)."""
        self.calls.clear()
        self.gateways.clear()
        out: dict = {}
        yield out
        out["requests"] = sorted(self.calls) + ["gateway " + g for g in sorted(set(self.gateways))]


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def _without(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def store_fingerprint(run_dir: Path) -> dict[str, str]:
    """Per file of the run store (trial and audit-unit tables, metrics, manifest), a digest of its content."""
    parts = {}
    units = [p for section in ("trials", "audits") if (run_dir / section).is_dir()
             for p in sorted((run_dir / section).iterdir()) if p.is_dir()]
    for trial in units:
        for table in sorted(trial.glob("*.parquet")):
            parts[f"{trial.name}/{table.name}"] = table_digest(table)
        metrics = trial / "metrics.json"
        if metrics.is_file():
            parts[f"{trial.name}/metrics.json"] = _digest(_without(json.loads(metrics.read_text()),
                                                                   TIMING_KEYS | PROTOCOL_COPY_KEYS))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    parts["manifest.json"] = _digest(_without(manifest, TIMING_KEYS | SPEC_COPY_KEYS | PROTOCOL_COPY_KEYS))
    return parts


def table_digest(path: Path, without: tuple[str, ...] = NOT_COMPARED_CALL_COLUMNS) -> str:
    """A digest of a parquet table's columns (names, types, values), leaving out the columns ``without``.

    Read with pyarrow and digested as an Arrow IPC stream (schema metadata dropped): the same content
    gives the same bytes, and it is several times cheaper than converting to pandas and CSV."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    table = table.drop_columns([c for c in without if c in table.column_names])
    table = table.replace_schema_metadata(None).combine_chunks()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()


def analysis_fingerprint(run_dir: Path) -> dict[str, str]:
    """Per table of ``RUN/analysis/``, a digest; plus the report's verdicts on the frozen hypotheses."""
    from pvsst.analysis.report.build import frozen_spec
    from pvsst.analysis.report.verdicts import hypotheses_or_default, hypothesis_verdicts
    from pvsst.analysis.stats.plan import plan_from_spec

    parts, numbers = {}, {}
    for table in sorted((run_dir / "analysis").glob("*.csv")):
        parts[table.name] = hashlib.sha256(table.read_bytes()).hexdigest()
        try:
            frame = pd.read_csv(table)
        except pd.errors.EmptyDataError:
            continue
        frame = frame.drop(columns=[c for c in SETTING_ECHO_COLUMNS if c in frame.columns])
        numbers[table.name] = hashlib.sha256(frame.to_csv(index=False).encode()).hexdigest()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    contrasts = pd.read_csv(run_dir / "analysis" / "contrasts.csv")
    spec, _ = frozen_spec(manifest)
    plan = plan_from_spec(manifest["spec"])
    settings = plan.settings
    verdicts = hypothesis_verdicts(hypotheses_or_default(spec, contrasts, plan.primary_metric), contrasts,
                                   alpha=settings.alpha, min_model_share=settings.consistency.min_model_share,
                                   min_topic_share=settings.consistency.min_topic_share,
                                   multiplicity=settings.multiplicity)
    parts["verdicts"] = numbers["verdicts"] = _digest([v.__dict__ for v in verdicts])
    return {"analysis": parts, "numbers": numbers}


SHIPPED_VECTORS = Path(__file__).resolve().parents[1] / "experiments" / "surveys" / "wvs2011_values_smollm2.npz"


def write_identity_vectors(path: Path, seed: int) -> None:
    """Random identity vectors of sex and every education level, as if measured on the embedded model."""
    from pvsst.personas.vocabulary import EDUCATION_LEVELS, SEXES
    from pvsst.sim.identity.vectors import IdentityVectors, load_vectors, save_vectors

    shipped = load_vectors(SHIPPED_VECTORS)
    entries = [["sex", v] for v in SEXES] + [["education", v] for v in EDUCATION_LEVELS]
    header = {**shipped.header, "entries": entries,
              "attributes": {a: {v: {"personas": 1, "prompts": 1} for b, v in entries if b == a} for a, _ in entries}}
    shape = (len(entries), len(header["layers"]), header["n_embd"])
    save_vectors(IdentityVectors(header, np.random.default_rng(seed).normal(0, 1, shape).astype(np.float32)), path)


def write_spec(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


class StopwordProvider:
    """``scripted/stopwords`` (registered by the coverage test): agent ``a00`` posts only stop words, the
    others a content sentence, so the final round has an empty TF-IDF row (the case where pvsst's and the
    reference's similarity edge cases differ). Votes are a valid instance of the vote schema."""

    name = "stopwords"

    def reply(self, request):
        import json

        import numpy as np

        from pvsst.sim.llm.providers.scripted import schema_instance
        from pvsst.sim.llm.types import ProviderReply

        properties = (request.schema or {}).get("properties", {})
        if "votes" in properties:
            value = schema_instance(request.schema, np.random.default_rng(request.seed or 0), ["ok"])
        else:
            post = "the and of it" if str(request.agent_id).startswith("a00") else "labels protect careful readers"
            value = {"post": post, "opinion": "lean support", "confidence": 0.5, "reason": "coverage"}
        return ProviderReply(text=json.dumps(value), prompt_tokens=1, completion_tokens=1)


class NoVoteProvider:
    """``scripted/novotes`` (registered by the coverage test): posts as ``scripted/stopwords``' content
    sentence, and every vote reply a JSON object without one usable vote (``{"votes": []}``), the case
    where the vote parse-failure denominators ``rows`` and ``voters`` differ under lenient handling."""

    name = "novotes"

    def reply(self, request):
        import json

        from pvsst.sim.llm.types import ProviderReply

        if "votes" in (request.schema or {}).get("properties", {}):
            return ProviderReply(text=json.dumps({"votes": []}), prompt_tokens=1, completion_tokens=1)
        value = {"post": "labels protect careful readers", "opinion": "lean support", "confidence": 0.5,
                 "reason": "coverage"}
        return ProviderReply(text=json.dumps(value), prompt_tokens=1, completion_tokens=1)
