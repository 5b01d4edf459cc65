"""A run folder is pvsst's or nobody's: what ``--out`` may be, and the lock that one writer holds.

``--out`` (of ``pvsst run``, ``pvsst survey run``, ``pvsst simulate``) must be absent, empty, or a pvsst
run folder (it holds ``manifest.json``; the caller then checks that the manifest is of the same frozen
input). Anything else is refused by :func:`check_run_folder` before anything is written, naming the
folder: a file, a device, a folder holding other files, or a folder with pvsst's tables but no
manifest (nobody can tell which input they belong to). pvsst never writes into a folder it does not own.

:func:`run_folder_lock` is the run-folder lock: an operating-system lock (``flock``) on
``RUN/.pvsst.lock``, held for as long as a command uses the folder. A writer (``pvsst run``, ``survey
run``, ``simulate``, ``analyze``, ``report``, ``judge``, ``survey score``) takes it exclusively and
writes into the lock file who it is (process id, host, command, start time); a reader (``pvsst
verify``) takes it shared. A second writer, or a reader while a writer works, is refused with one line
naming the holder; a lock dies with its process, so a killed run never leaves the folder locked. The
lock is reentrant within one process (``pvsst report`` runs the analysis under its own lock).

Examples
--------
>>> import tempfile
>>> run = Path(tempfile.mkdtemp()) / "run"
>>> check_run_folder(run)  # absent: pvsst may create it
>>> with run_folder_lock(run, create=True):
...     holder(run)["pid"] == os.getpid()
True
>>> (run / "notes.txt").write_text("mine") and None
>>> try:
...     check_run_folder(run)
... except InputError as err:
...     print(err.field, "|", err.problem[:48])
--out | holds files that are not a pvsst run (notes.txt)
"""
from __future__ import annotations

import fcntl
import functools
import inspect
import json
import os
import socket
import stat
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from pvsst.core.errors import InputError, os_errno
from pvsst.core.redaction import redact
from pvsst.core.run_layout import CACHE_FILES, LOCK, MANIFEST, RUN_ENTRIES, RUN_RECORDS

NAME_MAX = 255
"""Longest file name (bytes) the common filesystems take."""

_HELD: dict[str, list] = {}  # real path -> [descriptor, depth, shared]


def check_folder_name(path: str | Path, option: str = "--out") -> Path:
    """``path`` as a ``Path``; an empty name (an unset variable) or a name longer than a filesystem takes
    is an ``InputError``.

    Examples
    --------
    >>> check_folder_name("runs/r1").as_posix()
    'runs/r1'
    >>> try:
    ...     check_folder_name("  ")
    ... except InputError as err:
    ...     print(err)
    --out: folder: an empty name (an unset variable?); give the folder's name
    """
    text = str(path)
    if not text.strip():
        raise InputError(option, "folder", "an empty name (an unset variable?); give the folder's name")
    for part in Path(text).parts:
        if len(os.fsencode(part)) > NAME_MAX:
            raise InputError(f"{part[:40]}...", option, f"a name of {len(os.fsencode(part))} bytes; the "
                             f"filesystem takes at most {NAME_MAX}")
    return Path(text)


def check_run_folder(run_dir: str | Path) -> None:
    """Refuse ``run_dir`` as ``--out`` unless it is absent, empty or a pvsst run folder (see the module
    docstring); writes nothing."""
    run_dir = check_folder_name(run_dir)
    try:
        mode = os.stat(run_dir).st_mode
    except FileNotFoundError:
        return
    except OSError as err:
        raise InputError(run_dir, "--out", f"cannot use it as a run folder: {_problem(err)}") \
            from None
    if not stat.S_ISDIR(mode):
        what = "a file" if stat.S_ISREG(mode) else "a device or special file"
        raise InputError(run_dir, "--out", f"is {what}, not a folder; give a new or empty folder")
    if (run_dir / MANIFEST).is_file():
        return  # a pvsst run folder: the caller checks that it is of the same input
    try:
        entries = sorted(entry.name for entry in os.scandir(run_dir) if not _left_by_pvsst(entry.name))
    except OSError as err:
        raise InputError(run_dir, "--out", f"cannot read the folder: {_problem(err)}") from None
    if set(entries) <= CACHE_FILES:
        return  # nothing, or only a response cache (content-addressed: it replays only identical requests)

    if all(name in RUN_ENTRIES for name in entries) and RUN_RECORDS & set(entries):
        raise InputError(run_dir / MANIFEST, "manifest", f"missing, but the folder holds a run's files "
                         f"({', '.join(entries[:3])}); pvsst cannot tell which input they belong to: restore "
                         "the manifest, or give a new --out")
    raise InputError(run_dir, "--out", f"holds files that are not a pvsst run ({', '.join(entries[:3])}"
                     f"{', ...' if len(entries) > 3 else ''}); pvsst writes only into a new or empty folder or "
                     "its own run folder")


def holds_run_folder(function: Callable) -> Callable:
    """Run ``function`` (whose first argument is a run folder, or ``None``: no folder) holding that folder's
    lock as a writer: ``pvsst analyze``, ``pvsst report``, ``pvsst judge``, ``pvsst survey score``."""
    first = next(iter(inspect.signature(function).parameters))

    @functools.wraps(function)
    def holding(*args, **kwargs):
        run_dir = args[0] if args else kwargs.get(first)
        if run_dir is None:
            return function(*args, **kwargs)
        with run_folder_lock(run_dir):
            return function(*args, **kwargs)

    return holding


@contextmanager
def claimed_run_folder(run_dir: str | Path) -> Iterator[None]:
    """A run's ``--out``: checked (:func:`check_run_folder`), created, and locked for the block; checked
    again under the lock (another run may have written it in between). Within a block that claimed it
    already (``pvsst simulate`` writes its spec there, then runs it), nothing more is checked."""
    if os.path.realpath(run_dir) in _HELD:
        with run_folder_lock(run_dir):
            yield
        return
    check_run_folder(run_dir)
    with run_folder_lock(run_dir, create=True):
        check_run_folder(run_dir)
        yield


def _problem(err: OSError) -> str:
    code = os_errno(err)
    return os.strerror(code).lower() if code else str(err)[:200]


def _left_by_pvsst(name: str) -> bool:
    """The lock file, or a hidden staging folder an interrupted write left (``.NAME.*.tmp``)."""
    return name == LOCK or (name.startswith(".") and name.endswith(".tmp"))


@contextmanager
def run_folder_lock(run_dir: str | Path, *, shared: bool = False, create: bool = False) -> Iterator[None]:
    """Hold the lock of ``run_dir`` for the block (see the module docstring); ``create`` makes the folder
    first (a run's ``--out``). A folder that does not exist, that is not a run's (no manifest: nothing is
    written into it, not even the lock), or whose lock another process holds, is an ``InputError`` naming it."""
    run_dir = Path(run_dir)
    if create:
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise InputError(run_dir, "--out", f"cannot create the run folder: "
                             f"{_problem(err)}") from None
    elif not run_dir.is_dir():
        raise InputError(run_dir, "run directory", "does not exist" if not run_dir.exists() else "is not a folder")
    elif os.path.realpath(run_dir) not in _HELD and not (run_dir / MANIFEST).is_file():
        raise InputError(run_dir, MANIFEST, "missing (not a pvsst run folder)")
    key = os.path.realpath(run_dir)
    held = _HELD.get(key)
    if held is not None:  # this process holds it already (a report running its analysis)
        held[1] += 1
        try:
            yield
        finally:
            held[1] -= 1
        return
    descriptor = _open_lock(run_dir / LOCK, shared)
    if descriptor is None:  # a reader of a folder it cannot write: nobody can be writing it either
        yield
        return
    try:
        fcntl.flock(descriptor, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except OSError:
        who = _describe(_wait_for_holder(descriptor))
        os.close(descriptor)
        raise InputError(run_dir, "lock", f"another pvsst process is using this run folder ({who}); wait "
                         "for it to end (or stop it), then try again") from None
    _HELD[key] = [descriptor, 1, shared]
    try:
        if not shared:
            _write_holder(descriptor)
        yield
    finally:
        del _HELD[key]
        try:
            if not shared:
                os.ftruncate(descriptor, 0)  # a later contender meets no stale holder
        except OSError:
            pass
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        os.close(descriptor)


def _open_lock(path: Path, shared: bool) -> int | None:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:
        if shared:
            try:
                return os.open(path, os.O_RDONLY)
            except OSError:
                return None
        raise InputError(path.parent, "lock", f"cannot write the run folder: {_problem(err)}") \
            from None


def _write_holder(descriptor: int) -> None:
    command = " ".join(["pvsst" if Path(sys.argv[0]).name in ("pvsst", "__main__.py") else Path(sys.argv[0]).name,
                        *sys.argv[1:]])
    record = {"pid": os.getpid(), "host": socket.gethostname(), "command": redact(command)[:300],
              "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    data = (json.dumps(record, sort_keys=True) + "\n").encode()
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, data, 0)


def _read_holder(descriptor: int) -> dict:
    try:
        return json.loads(os.pread(descriptor, 4096, 0).decode() or "{}")
    except (OSError, ValueError):
        return {}


def _wait_for_holder(descriptor: int, patience_s: float = 1.0) -> dict:
    """The holder's record; a writer that won the lock a moment ago writes it within ``patience_s``."""
    deadline = time.monotonic() + patience_s
    record = _read_holder(descriptor)
    while not record.get("pid") and time.monotonic() < deadline:
        time.sleep(0.02)
        record = _read_holder(descriptor)
    return record


def holder(run_dir: str | Path) -> dict:
    """Who holds the run folder's lock as a writer, as written in its lock file (``{}``: nobody, or a reader)."""
    try:
        return json.loads((Path(run_dir) / LOCK).read_text() or "{}")
    except (OSError, ValueError):
        return {}


def _describe(record: dict) -> str:
    if not record.get("pid"):
        return "a reader such as `pvsst verify`, or a writer just starting"
    return (f"pid {record['pid']} on {record.get('host', '?')}, `{record.get('command', '?')}`, started "
            f"{record.get('started_at', '?')}")
