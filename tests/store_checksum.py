"""A checksum of a run store's content (trial tables and outcome metrics), blind to times and versions.

Used by the refactor guard: the ``scripted_smoke`` store must keep the checksum it had before a
restructure. Tables are read with pandas and hashed as CSV text, so the checksum depends on the values,
not on Parquet encoding details.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

TABLES = ("agents", "posts", "votes", "exposures", "edges")
TIMING_KEYS = {"elapsed_seconds", "elapsed_s"}


def store_checksum(run_dir: str | Path, tables: tuple[str, ...] = TABLES, metrics_keys: frozenset | None = None) -> str:
    """sha256 over every trial's ``tables`` (as CSV) and ``metrics.json`` without timing keys (and, given
    ``metrics_keys``, only those keys: outputs may gain keys that record settings)."""
    digest = hashlib.sha256()
    for trial in sorted(p for p in (Path(run_dir) / "trials").iterdir() if p.is_dir() and not p.name.startswith(".")):
        digest.update(trial.name.encode())
        for table in tables:
            frame = pd.read_parquet(trial / f"{table}.parquet")
            digest.update(table.encode())
            digest.update(frame.to_csv(index=False).encode())
        metrics = json.loads((trial / "metrics.json").read_text())
        kept = {k: v for k, v in metrics.items()
                if k not in TIMING_KEYS and (metrics_keys is None or k in metrics_keys)}
        digest.update(json.dumps(kept, sort_keys=True).encode())
    return digest.hexdigest()
