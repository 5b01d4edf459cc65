"""The tables of a thread run, read from its run folder: each thread table over every finished thread.

A thread run (``pvsst run`` of a ``schedule: threads`` spec) holds ``RUN/threads/<thread_id>/`` with
the tables of :data:`THREAD_RUN_TABLES`, and, after ``pvsst judge attributes``, one folder per judge
under ``RUN/attributes/`` holding its attribute guesses. Only complete folders (``DONE``, their files
checked against the hashes it records) are read.

Examples
--------
>>> import tempfile
>>> run = Path(tempfile.mkdtemp())
>>> tables = read_thread_run(run)
>>> sorted(tables), len(tables["comments"])
(['actions', 'agents', 'comment_votes', 'comments', 'llm_calls'], 0)
>>> is_thread_run(run)
False
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from pvsst.analysis.store.reader import THREAD_RUN_TABLES, iter_unit_tables, run_schedule
from pvsst.core.errors import InputError
from pvsst.core.integrity import complete_unit_dirs
from pvsst.core.run_layout import ATTRIBUTES, THREADS, table_file

GUESSES = "guesses"
"""The table of an attribute judge's folder: one row per author x attribute x guess."""


def is_thread_run(run_dir: str | Path) -> bool:
    """Whether ``run_dir`` holds a thread run (its manifest says ``schedule: threads``)."""
    return run_schedule(run_dir) == THREADS


def read_thread_run(run_dir: str | Path, names=THREAD_RUN_TABLES) -> dict[str, pd.DataFrame]:
    """Each table of ``names`` concatenated over the run's finished threads, in thread order."""
    frames: dict[str, list[pd.DataFrame]] = {name: [] for name in names}
    for _, tables in iter_unit_tables(run_dir, THREADS, names):
        for name, frame in tables.items():
            frames[name].append(frame)
    return {name: pd.concat(parts, ignore_index=True) if parts else pd.DataFrame() for name, parts in frames.items()}


def read_thread(run_dir: str | Path, thread_id: str) -> dict[str, pd.DataFrame]:
    """The tables of one finished thread; an unknown or unfinished thread is an ``InputError`` naming the
    finished ones."""
    done = {p.name: p for p in complete_unit_dirs(run_dir, THREADS)}
    if thread_id not in done:
        known = ", ".join(list(done)[:6]) or "none"
        raise InputError(str(Path(run_dir) / THREADS / thread_id), "THREAD",
                         f"no finished thread here (threads: {known})")
    folder = done[thread_id]
    return {p.name.removesuffix(".parquet"): pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}


def read_attribute_guesses(run_dir: str | Path) -> pd.DataFrame:
    """Every judge's attribute guesses (``RUN/attributes/<judge>/guesses.parquet``), concatenated."""
    frames = [pd.read_parquet(folder / table_file(GUESSES)) for folder in complete_unit_dirs(run_dir, ATTRIBUTES)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
