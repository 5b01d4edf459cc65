"""Read a run store (or any per-trial table) into tidy pandas frames.

A run directory (docs/run-store.md; the names are :mod:`pvsst.core.run_layout`'s) holds ``manifest.json``
and one folder per trial under ``trials/<trial_id>/``; only trials with a ``DONE`` marker are complete
and read into a :class:`RunTables`. Each table is the
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
from pvsst.core.integrity import complete_unit_dirs
from pvsst.core.run_layout import (DONE, MANIFEST, METRICS, SURVEY_RUN_TABLES, TRIAL_TABLES, TRIALS, UNIT_TABLES,
                                   table_file)

RUN_TABLES = TRIAL_TABLES
TRIAL_FACTOR_COLUMNS = ("trial_id", "block_id", "model", "topic_id", "seed", "condition", "push_direction")


@dataclass(frozen=True)
class RunTables:
    """What one run directory holds, as frames: the one class every reader of a run store gets
    (:func:`load_run`, :func:`pvsst.open_run`).

    ``kind`` is ``"study"`` or ``"survey"``. A study run fills ``trials`` (one row per trial, from its
    ``metrics.json``) and ``agents``, ``posts``, ``votes``, ``exposures``, ``edges``, ``llm_calls``; a
    survey run fills ``responses``, ``llm_calls``, ``prompts`` (over its units) and ``human``,
    ``personas``. Frames a run kind does not have are empty. ``analysis`` maps each table under
    ``RUN/analysis/`` (CSV or Parquet) to its frame, by file stem (``contrasts``, ``fidelity``, ...).
    """

    path: Path
    kind: str
    manifest: dict
    trials: pd.DataFrame = field(default_factory=pd.DataFrame)
    agents: pd.DataFrame = field(default_factory=pd.DataFrame)
    posts: pd.DataFrame = field(default_factory=pd.DataFrame)
    votes: pd.DataFrame = field(default_factory=pd.DataFrame)
    exposures: pd.DataFrame = field(default_factory=pd.DataFrame)
    edges: pd.DataFrame = field(default_factory=pd.DataFrame)
    llm_calls: pd.DataFrame = field(default_factory=pd.DataFrame)
    responses: pd.DataFrame = field(default_factory=pd.DataFrame)
    prompts: pd.DataFrame = field(default_factory=pd.DataFrame)
    human: pd.DataFrame = field(default_factory=pd.DataFrame)
    personas: pd.DataFrame = field(default_factory=pd.DataFrame)
    analysis: dict[str, pd.DataFrame] = field(default_factory=dict)

    def __repr__(self) -> str:
        filled = [f"{name} ({len(getattr(self, name))} rows)" for name in self.table_names()]
        outputs = ", ".join(sorted(self.analysis)) or "none (run `pvsst analyze`)"
        return f"RunTables({self.kind} run {self.path}: {', '.join(filled) or 'no tables'}; analysis: {outputs})"

    def table_names(self) -> list[str]:
        """The tables this run has rows in."""
        names = ("trials", *TRIAL_TABLES, *UNIT_TABLES, *SURVEY_RUN_TABLES)
        return [name for name in dict.fromkeys(names) if not getattr(self, name).empty]

    def trial(self, trial_id: str) -> dict[str, pd.DataFrame]:
        """The per-trial slices of every trial table (empty frames where a table has no rows)."""
        return {name: _rows_of(getattr(self, name), trial_id) for name in TRIAL_TABLES}


def completed_trial_dirs(run_dir: str | Path) -> list[Path]:
    """Trial folders with a DONE marker, sorted by name."""
    return complete_unit_dirs(run_dir, TRIALS)


def load_run(run_dir: str | Path, analysis: dict[str, pd.DataFrame] | None = None) -> RunTables:
    """Load the completed trials of a study run directory into :class:`RunTables` (with the ``analysis``
    outputs given, if any).

    A missing directory or manifest, or a DONE trial without ``metrics.json``, raises
    :class:`InputError`. Tables a trial did not write are simply absent from the concatenation.
    """
    run_dir = Path(run_dir)
    manifest_path = run_dir / MANIFEST
    if not run_dir.is_dir():
        raise InputError(str(run_dir), "run directory", "does not exist")
    if not manifest_path.exists():
        raise InputError(str(run_dir), MANIFEST, "missing")
    manifest = _read_json(manifest_path)
    trial_rows, tables = [], {name: [] for name in RUN_TABLES}
    for trial_dir in completed_trial_dirs(run_dir):
        metrics_path = trial_dir / METRICS
        if not metrics_path.exists():
            raise InputError(str(trial_dir), METRICS, f"missing in a completed ({DONE}) trial")
        metrics = _read_json(metrics_path)
        metrics.setdefault("trial_id", trial_dir.name)
        trial_rows.append(metrics)
        for name in RUN_TABLES:
            path = trial_dir / table_file(name)
            if path.exists():
                frame = pd.read_parquet(path)
                if "trial_id" not in frame.columns:
                    frame.insert(0, "trial_id", metrics["trial_id"])
                tables[name].append(frame)
    trials = pd.DataFrame(trial_rows)
    frames = {name: (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame())
              for name, parts in tables.items()}
    return RunTables(run_dir, "study", manifest, trials, analysis=analysis or {}, **frames)


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
