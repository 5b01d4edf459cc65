"""The one atomic writer: a file or a directory appears complete under its name, or not at all.

Everything is written beside its target (same folder, so same filesystem) under a hidden temporary
name and renamed into place with ``os.replace``; on any error the temporary is removed and an existing
target is left as it was. It lives in ``pvsst.core``, which every package may import and which imports
none of them.

Examples
--------
>>> import json, tempfile
>>> root = Path(tempfile.mkdtemp())
>>> write_json(root / "manifest.json", {"b": 1, "a": [2]}).name
'manifest.json'
>>> json.loads((root / "manifest.json").read_text())
{'a': [2], 'b': 1}
>>> with atomic_directory(root / "analysis") as staging:
...     _ = (staging / "contrasts.csv").write_text("x\\n")
>>> sorted(p.name for p in root.iterdir())
['analysis', 'manifest.json']
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from pvsst.core.errors import InputError

LEDGER = ".pvsst-files"
"""The list of files a directory written with ``atomic_directory(..., ledger=True)`` holds."""
FILE_MODE = 0o644
"""Permissions of a written file (``mkstemp`` creates 0600; outputs are ordinary shared files)."""


@contextmanager
def atomic_file(path: str | Path, *, fsync: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on a clean exit it is renamed to ``path``.

    The caller writes the whole file to the yielded path (with any library: pandas, pyarrow,
    matplotlib). ``fsync`` flushes it to disk before the rename (for files that must survive a power
    loss, such as a preregistration lock).

    Examples
    --------
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "t.csv"
    >>> with atomic_file(target) as tmp:
    ...     _ = tmp.write_text("a,b\\n")
    >>> target.read_text(), [p.name for p in target.parent.iterdir()]
    ('a,b\\n', ['t.csv'])
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    tmp = Path(name)
    try:
        yield tmp
        if fsync:
            with open(tmp, "rb") as written:
                os.fsync(written.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text(path: str | Path, text: str, *, fsync: bool = False) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; return ``path``."""
    with atomic_file(path, fsync=fsync) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_json(path: str | Path, data: Any, *, fsync: bool = False) -> Path:
    """Write ``data`` as indented, key-sorted JSON (one trailing newline) to ``path`` atomically."""
    return write_text(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", fsync=fsync)


def write_csv_tables(tables: dict[str, Any], directory: str | Path) -> list[Path]:
    """Write each pandas frame of ``tables`` (file name -> frame) to ``directory`` as CSV, atomically, at
    six significant digits; return the paths in order.

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> [p.name for p in write_csv_tables({"a.csv": pd.DataFrame({"x": [1 / 3]})}, tempfile.mkdtemp())]
    ['a.csv']
    """
    paths = []
    for file, frame in tables.items():
        target = Path(directory) / file
        with atomic_file(target) as tmp:
            frame.to_csv(tmp, index=False, float_format="%.6g")
        paths.append(target)
    return paths


@contextmanager
def atomic_directory(path: str | Path, *, ledger: bool = False, keep: tuple[str, ...] = ()) -> Iterator[Path]:
    """Yield an empty staging directory beside ``path``; on a clean exit it replaces ``path``.

    An existing ``path`` is renamed out of the way first and deleted after the new one is in, so
    ``path`` is always either the old complete directory or the new complete one. With ``ledger`` (a
    folder a user may also see and use: ``RUN/analysis``, ``RUN/report``, ``RUN/materials``) the new
    directory lists its files in :data:`LEDGER`, and an existing ``path`` is replaced only when every
    file in it is pvsst's (:func:`check_replaceable`; ``keep``: subfolders the caller carries into the
    new directory): pvsst never deletes a file it did not write.
    """
    path = Path(os.path.abspath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield staging
        if ledger:
            files = sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*") if not p.is_dir())
            (staging / LEDGER).write_text(json.dumps(files, indent=0) + "\n", encoding="utf-8")
            check_replaceable(path, staging, keep)
        os.chmod(staging, 0o755)
        swap_in_directory(staging, path)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def check_replaceable(target: str | Path, staging: str | Path | None = None, keep: tuple[str, ...] = ()) -> None:
    """Refuse (``InputError`` naming the file) to replace ``target`` while it holds a file pvsst did not
    write: one its :data:`LEDGER` does not list, not under a ``keep`` subfolder (carried into the new
    directory by its writer) and, once the new directory is ready (``staging``), not in it either. Called
    before a command computes anything (no ``staging``) and again just before the swap.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "report").mkdir(); (root / "new").mkdir()
    >>> _ = (root / "report" / "notes.md").write_text("mine")
    >>> try:
    ...     check_replaceable(root / "report", root / "new")
    ... except InputError as err:
    ...     print(Path(err.source).name, "|", err.problem[:24])
    notes.md | not written by pvsst, wh
    """
    target = Path(target)
    if not target.is_dir():
        return
    try:
        listed = set(json.loads((target / LEDGER).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        listed = set()
    for found in sorted(target.rglob("*")):
        if found.is_dir() and not found.is_symlink():
            continue
        name = found.relative_to(target).as_posix()
        if name == LEDGER or name in listed or name.split("/")[0] in keep:
            continue
        if staging is None or not (Path(staging) / name).exists():
            raise InputError(found, "run folder", f"not written by pvsst, which replaces {target.name}/ as a "
                             "whole; move the file elsewhere, then run the command again")


def swap_in_directory(staging: str | Path, target: str | Path) -> None:
    """Move the finished ``staging`` directory to ``target``, retiring any old ``target`` first.

    Both must be on one filesystem (make ``staging`` beside ``target``).

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "new").mkdir(); _ = (root / "new" / "a.csv").write_text("x")
    >>> swap_in_directory(root / "new", root / "analysis")
    >>> sorted(p.name for p in (root / "analysis").iterdir()), (root / "new").exists()
    (['a.csv'], False)
    """
    staging, target = Path(staging), Path(target)
    if target.exists():
        retired = Path(tempfile.mkdtemp(prefix=f".{target.name}-old-", dir=target.parent))
        os.replace(target, retired / target.name)
        os.replace(staging, target)
        shutil.rmtree(retired, ignore_errors=True)
    else:
        os.replace(staging, target)
