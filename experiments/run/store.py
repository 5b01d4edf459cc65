"""Write a trial directory atomically: tables into a temporary directory, renamed, DONE marker last.

Layout (docs/run-store.md)::

    TRIALS/<trial_id>/agents.parquet posts.parquet votes.parquet exposures.parquet edges.parquet
                      llm_calls.parquet prompts.parquet metrics.json DONE
    RUN/materials/    a copy of the study materials the run used (templates, persona tables, ids)

A directory without DONE is an interrupted write: :func:`is_complete` says no and the runner redoes it.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from pvsst.core.atomic import atomic_directory

from pvsst.sim.materials import MATERIAL_FILES, materials_hashes
from pvsst.sim.trial.run import TrialResult

DONE = "DONE"


def is_complete(trial_dir: Path) -> bool:
    return (Path(trial_dir) / DONE).is_file()


def write_table(frame: pd.DataFrame, path: Path) -> None:
    """Parquet without the pandas index, so the same frame always gives the same bytes."""
    frame.to_parquet(path, index=False, engine="pyarrow", compression="zstd")


def write_table_directory(root: str | Path, name: str, tables: dict[str, pd.DataFrame],
                          files: dict[str, str] | None = None) -> Path:
    """Write ``tables`` (as Parquet) and ``files`` (text) to ``root/name`` atomically, DONE last.

    The directory is filled under a temporary name and renamed into place; a stale directory of the
    same name without DONE (an interrupted earlier write) is replaced.

    Examples
    --------
    >>> import tempfile
    >>> out = write_table_directory(tempfile.mkdtemp(), "t1", {"posts": pd.DataFrame({"x": [1]})})
    >>> sorted(p.name for p in out.iterdir()), is_complete(out)
    (['DONE', 'posts.parquet'], True)
    """
    final = Path(root) / name
    try:
        with atomic_directory(final) as tmp:  # a stale, incomplete attempt (no DONE) is replaced
            for table, frame in tables.items():
                write_table(frame, tmp / f"{table}.parquet")
            for filename, text in (files or {}).items():
                (tmp / filename).write_text(text)
        (final / DONE).write_text("ok\n")
    except OSError as err:
        if err.filename is None:  # pyarrow names no file: name the directory being written
            raise OSError(err.errno, err.strerror or str(err), str(final)) from err
        raise
    return final


def write_trial(result: TrialResult, trials_root: str | Path, metrics: dict) -> Path:
    """Write ``result`` and its ``metrics`` to ``trials_root/<trial_id>``; return that directory."""
    metrics_json = json.dumps(metrics, indent=2, sort_keys=True, default=str) + "\n"
    return write_table_directory(trials_root, result.config.trial_id, result.tables(), {"metrics.json": metrics_json})


def write_materials(run_dir: str | Path, source: str | Path) -> dict[str, str]:
    """Copy the study materials ``source`` into ``run_dir/materials`` (atomically); return their sha256s.

    The run store then holds the wording its prompts were made from, for the report's template-echo
    audit and for anyone reading the run later.

    Examples
    --------
    >>> import tempfile
    >>> from pvsst.sim.materials import default_materials_dir
    >>> hashes = write_materials(tempfile.mkdtemp(), default_materials_dir())
    >>> hashes == materials_hashes(default_materials_dir())
    True
    """
    hashes = materials_hashes(source)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    with atomic_directory(run_dir / "materials") as tmp:
        for name in MATERIAL_FILES:
            shutil.copy2(Path(source) / name, tmp / name)
    return hashes
