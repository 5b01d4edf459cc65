"""Write a trial directory atomically: tables into a temporary directory, renamed, DONE marker last.

Layout (DESIGN.md "Run store")::

    TRIALS/<trial_id>/agents.parquet posts.parquet votes.parquet exposures.parquet edges.parquet
                      llm_calls.parquet metrics.json DONE

A directory without DONE is an interrupted write: :func:`is_complete` says no and the runner redoes it.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import pandas as pd

from sim.trial import TrialResult

DONE = "DONE"


def is_complete(trial_dir: Path) -> bool:
    return (Path(trial_dir) / DONE).is_file()


def write_table(frame: pd.DataFrame, path: Path) -> None:
    """Parquet without the pandas index, so the same frame always gives the same bytes."""
    frame.to_parquet(path, index=False, engine="pyarrow", compression="zstd")


def write_trial(result: TrialResult, trials_root: str | Path, metrics: dict) -> Path:
    """Write ``result`` and its ``metrics`` to ``trials_root/<trial_id>``; return that directory."""
    trials_root = Path(trials_root)
    trials_root.mkdir(parents=True, exist_ok=True)
    final = trials_root / result.config.trial_id
    tmp = trials_root / f".tmp-{result.config.trial_id}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        for name, frame in result.tables().items():
            write_table(frame, tmp / f"{name}.parquet")
        (tmp / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True, default=str) + "\n")
        if final.exists():  # a stale, incomplete attempt (no DONE): replace it
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    (final / DONE).write_text("ok\n")
    return final
