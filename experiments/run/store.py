"""Write a unit's folder atomically: tables into a temporary directory, renamed, DONE marker last (holding
the sha256 of every file, :mod:`pvsst.core.integrity`).

The run kernel (:mod:`pvsst.experiments.run.kernel`) writes every trial and survey unit with
:func:`write_table_directory`; the names are those of :mod:`pvsst.core.run_layout` (docs/run-store.md)::

    RUN/trials/<trial_id>/agents.parquet posts.parquet votes.parquet exposures.parquet edges.parquet
                          llm_calls.parquet prompts.parquet metrics.json DONE
    RUN/units/<unit_id>/  responses.parquet llm_calls.parquet prompts.parquet DONE

A directory without DONE is an interrupted write: :func:`~pvsst.core.run_layout.is_complete` says no
and the kernel redoes it.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from pvsst.core.atomic import atomic_directory
from pvsst.core.integrity import write_done
from pvsst.core.run_layout import table_file


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
    >>> from pvsst.core.run_layout import is_complete
    >>> out = write_table_directory(tempfile.mkdtemp(), "t1", {"posts": pd.DataFrame({"x": [1]})})
    >>> sorted(p.name for p in out.iterdir()), is_complete(out)
    (['DONE', 'posts.parquet'], True)
    """
    final = Path(root) / name
    try:
        with atomic_directory(final) as tmp:  # a stale, incomplete attempt (no DONE) is replaced
            for table, frame in tables.items():
                write_table(frame, tmp / table_file(table))
            for filename, text in (files or {}).items():
                (tmp / filename).write_text(text)
        write_done(final)
    except OSError as err:
        if err.filename is None:  # pyarrow names no file: name the directory being written
            raise OSError(err.errno, err.strerror or str(err), str(final)) from err
        raise
    return final
