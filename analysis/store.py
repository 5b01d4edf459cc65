"""Read a run store (or any per-trial table) into tidy pandas frames.

A run directory (docs/run-store.md) holds ``manifest.json`` and one folder per trial under
``trials/<trial_id>/``; only trials with a ``DONE`` marker are complete and read. Each table is the
concatenation over those trials; ``trials`` has one row per trial from its ``metrics.json`` (factors such
as model, topic_id, seed, condition, push_direction plus the outcome row).

Examples
--------
>>> import pandas as pd
>>> table = load_trial_table(pd.DataFrame({"model": ["m"], "condition": ["likes"]}),
...                          required=("model", "condition"))
>>> list(table.columns)
['model', 'condition']
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pvsst.core.errors import InputError

RUN_TABLES = ("agents", "posts", "votes", "exposures", "edges", "llm_calls")
TRIAL_FACTOR_COLUMNS = ("trial_id", "block_id", "model", "topic_id", "seed", "condition", "push_direction")


@dataclass
class RunData:
    """Everything ``analysis`` reads from one run directory."""

    run_dir: Path
    manifest: dict
    trials: pd.DataFrame
    agents: pd.DataFrame = field(default_factory=pd.DataFrame)
    posts: pd.DataFrame = field(default_factory=pd.DataFrame)
    votes: pd.DataFrame = field(default_factory=pd.DataFrame)
    exposures: pd.DataFrame = field(default_factory=pd.DataFrame)
    edges: pd.DataFrame = field(default_factory=pd.DataFrame)
    llm_calls: pd.DataFrame = field(default_factory=pd.DataFrame)

    def trial(self, trial_id: str) -> dict[str, pd.DataFrame]:
        """The per-trial slices of every table (empty frames where a table has no rows)."""
        return {name: _rows_of(getattr(self, name), trial_id) for name in RUN_TABLES}


def completed_trial_dirs(run_dir: str | Path) -> list[Path]:
    """Trial folders with a DONE marker, sorted by name."""
    trials = Path(run_dir) / "trials"
    if not trials.is_dir():
        return []
    return sorted(p for p in trials.iterdir() if p.is_dir() and (p / "DONE").exists())


def load_run(run_dir: str | Path) -> RunData:
    """Load the completed trials of a run directory into :class:`RunData`.

    A missing directory or manifest, or a DONE trial without ``metrics.json``, raises
    :class:`InputError`. Tables a trial did not write are simply absent from the concatenation.
    """
    run_dir = Path(run_dir)
    manifest_path = run_dir / "manifest.json"
    if not run_dir.is_dir():
        raise InputError(str(run_dir), "run directory", "does not exist")
    if not manifest_path.exists():
        raise InputError(str(run_dir), "manifest.json", "missing")
    manifest = _read_json(manifest_path)
    trial_rows, tables = [], {name: [] for name in RUN_TABLES}
    for trial_dir in completed_trial_dirs(run_dir):
        metrics_path = trial_dir / "metrics.json"
        if not metrics_path.exists():
            raise InputError(str(trial_dir), "metrics.json", "missing in a completed (DONE) trial")
        metrics = _read_json(metrics_path)
        metrics.setdefault("trial_id", trial_dir.name)
        trial_rows.append(metrics)
        for name in RUN_TABLES:
            path = trial_dir / f"{name}.parquet"
            if path.exists():
                frame = pd.read_parquet(path)
                if "trial_id" not in frame.columns:
                    frame.insert(0, "trial_id", metrics["trial_id"])
                tables[name].append(frame)
    trials = pd.DataFrame(trial_rows)
    frames = {name: (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame())
              for name, parts in tables.items()}
    return RunData(run_dir, manifest, trials, **frames)


def load_trial_table(path_or_frame: str | Path | pd.DataFrame, required: Sequence[str] = ()) -> pd.DataFrame:
    """A per-trial table from CSV / Parquet (or a DataFrame), checked for the ``required`` columns."""
    if isinstance(path_or_frame, pd.DataFrame):
        table, source = path_or_frame, "table"
    else:
        path = Path(path_or_frame)
        source = str(path)
        if not path.exists():
            raise InputError(source, "file", "does not exist")
        try:
            table = pd.read_parquet(path) if path.suffix.lower() in (".parquet", ".pq") else pd.read_csv(path)
        except (ValueError, OSError, pd.errors.ParserError) as err:
            raise InputError(source, "file", f"unreadable table ({type(err).__name__})") from err
    missing = [c for c in required if c not in table.columns]
    if missing:
        raise InputError(source, missing[0], f"missing column (also missing: {', '.join(missing[1:])})"
                         if len(missing) > 1 else "missing column")
    return table


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise InputError(str(path), "json", f"not valid JSON (line {err.lineno})") from err


def _rows_of(frame: pd.DataFrame, trial_id: str) -> pd.DataFrame:
    if frame.empty or "trial_id" not in frame.columns:
        return frame
    return frame[frame["trial_id"] == trial_id]
