"""A checksum of a run store's content (trial tables and outcome metrics), blind to times and versions.

Used by the refactor guard: the ``scripted_smoke`` store must keep the checksum it had before a
restructure. Tables are read with pandas and hashed as CSV text, so the checksum depends on the values,
not on Parquet encoding details.

Floats are hashed at ``digits`` significant digits (12 by default). Outcome metrics such as
``final_honest_pairwise_similarity`` are sums of BLAS products, and numpy/OpenBLAS pick their kernels by
CPU: on an AVX-512 machine 9 of the 32 smoke trials differ from an AVX2 machine in the last bit (e.g.
0.11690316418098813 against 0.1169031641809881). A refactor that changes a result changes it far above
the 12th digit; ``digits=None`` hashes the exact ``repr`` of every float.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

TABLES = ("agents", "posts", "votes", "exposures", "edges")
TIMING_KEYS = {"elapsed_seconds", "elapsed_s"}


def _rounded(value, digits: int):
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, dict):
        return {k: _rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v, digits) for v in value]
    return value


def store_checksum(run_dir: str | Path, tables: tuple[str, ...] = TABLES, metrics_keys: frozenset | None = None,
                   digits: int | None = 12) -> str:
    """sha256 over every trial's ``tables`` (as CSV) and ``metrics.json`` without timing keys (and, given
    ``metrics_keys``, only those keys: outputs may gain keys that record settings), floats at ``digits``
    significant digits (``None``: exact)."""
    digest = hashlib.sha256()
    float_format = None if digits is None else f"%.{digits}g"
    for trial in sorted(p for p in (Path(run_dir) / "trials").iterdir() if p.is_dir() and not p.name.startswith(".")):
        digest.update(trial.name.encode())
        for table in tables:
            frame = pd.read_parquet(trial / f"{table}.parquet")
            digest.update(table.encode())
            digest.update(frame.to_csv(index=False, float_format=float_format).encode())
        metrics = json.loads((trial / "metrics.json").read_text())
        kept = {k: v for k, v in metrics.items()
                if k not in TIMING_KEYS and (metrics_keys is None or k in metrics_keys)}
        if digits is not None:
            kept = _rounded(kept, digits)
        digest.update(json.dumps(kept, sort_keys=True).encode())
    return digest.hexdigest()
