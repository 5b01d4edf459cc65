"""Files a spec or instrument names (persona tables, edge lists, data, materials): what they must be, and their hash.

Every such file must be a regular file: a FIFO would hang the reader, ``/dev/urandom`` would grow
without bound and a directory is no table. :func:`regular_file` checks that from the file's status
alone (nothing is opened), and, for a text table, that its size fits in memory
(:func:`text_table_limit`) and that it does not start with NUL bytes (a sparse or binary file named
``.csv``). A problem is one ``InputError`` naming the file and the field that names it.

:func:`read_json` is the one reader of a JSON file pvsst is given or wrote (a manifest, a lock, a
schema, a run's records): a missing, unreadable or malformed file is one ``InputError``.

:func:`file_sha256` is the one hash of a file's bytes: the lock records it for every file a study or
instrument reads (:mod:`pvsst.experiments.spec.lock`), and a unit's ``DONE`` marker for every file of
the unit (:mod:`pvsst.core.integrity`).

Examples
--------
>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "edges.txt").write_text("a00 a01\\n")
>>> regular_file(folder / "edges.txt", "trial.network.path", text=True).name
'edges.txt'
>>> try:
...     regular_file(folder, "personas.path")
... except InputError as err:
...     print(err.field, "|", err.problem)
personas.path | a directory, not a regular file
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from pvsst.core.errors import InputError

SNIFF_BYTES = 1 << 16
"""How much of a text table is checked for NUL bytes."""


def text_table_limit() -> int:
    """The largest text table (CSV, edge list) pvsst reads: an eighth of this machine's memory (pandas holds
    a CSV several times over while parsing it), at least 64 MiB.

    Examples
    --------
    >>> text_table_limit() >= 64 << 20
    True
    """
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        memory = 8 << 30
    return max(64 << 20, memory // 8)


def regular_file(path: str | Path, field: str, *, text: bool = False) -> Path:
    """``path`` when it is a regular file (see the module docstring); else an ``InputError`` naming it and
    ``field``. With ``text``, also refuse a file larger than :func:`text_table_limit` or starting with NUL bytes."""
    path = Path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError(path, field, "no such file") from None
    except OSError as err:
        raise InputError(path, field, f"cannot read ({err.strerror or err})") from None
    mode = info.st_mode
    if not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "a special file")
        raise InputError(path, field, f"{kind}, not a regular file")
    if text:
        limit = text_table_limit()
        if info.st_size > limit:
            raise InputError(path, field, f"{info.st_size / 2**20:,.0f} MiB: larger than the {limit / 2**20:,.0f} MiB "
                             "a text table may be on this machine (an eighth of its memory)")
        try:
            with open(path, "rb") as handle:
                head = handle.read(SNIFF_BYTES)
        except OSError as err:
            raise InputError(path, field, f"cannot read ({err.strerror or err})") from None
        if b"\0" in head:
            raise InputError(path, field, "holds NUL bytes: not a text table (a binary or sparse file?)")
    return path


def file_sha256(path: str | Path) -> str:
    """sha256 (hex) of a file's bytes, read in 1 MiB blocks.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "a.txt"
    >>> _ = path.write_bytes(b"abc")
    >>> file_sha256(path)[:12]
    'ba7816bf8f01'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
               float: "a number", type(None): "null"}


def read_json(path: str | Path, field: str, *, expect: type | None = dict, hint: str = "") -> Any:
    """The JSON value held by the file ``path``, or one ``InputError`` naming the file and ``field``.

    Parameters
    ----------
    path : str or Path
        The JSON file.
    field : str
        What the file is, for the error line (``"manifest"``, ``"schema"``, ``"lock"``).
    expect : type or None, default dict
        The Python type the top-level value must have (``dict``: a JSON object); ``None`` takes any.
    hint : str, default ""
        What to do about a bad file, appended to the problem after ``"; "``.

    Returns
    -------
    Any
        The parsed value.

    Raises
    ------
    InputError
        The file is missing, unreadable, not UTF-8, not valid JSON (with the line and column) or its
        top-level value is not an ``expect``.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "ok.json").write_text('{"a": 1}')
    >>> read_json(folder / "ok.json", "manifest")
    {'a': 1}
    >>> _ = (folder / "bad.json").write_text('{"a": ')
    >>> for name in ("bad.json", "ok.json", "none.json"):
    ...     try:
    ...         read_json(folder / name, "schema", expect=list if name == "ok.json" else dict)
    ...     except InputError as err:
    ...         print(err.field, "|", err.problem)
    schema | not valid JSON (line 1, column 7: Expecting value)
    schema | an object in JSON, not an array
    schema | no such file
    """
    path = Path(path)
    suffix = f"; {hint}" if hint else ""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, field, f"no such file{suffix}") from None
    except UnicodeDecodeError:
        raise InputError(path, field, f"not UTF-8 text, so not JSON{suffix}") from None
    except OSError as err:
        raise InputError(path, field, f"cannot read ({err.strerror or err}){suffix}") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(path, field, f"not valid JSON (line {err.lineno}, column {err.colno}: {err.msg}){suffix}"
                         ) from None
    if expect is not None and not isinstance(value, expect):
        found, wanted = (_JSON_TYPES.get(kind, kind.__name__) for kind in (type(value), expect))
        raise InputError(path, field, f"{found} in JSON, not {wanted}{suffix}")
    return value

