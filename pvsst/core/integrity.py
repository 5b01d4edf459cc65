"""The run store's integrity: each unit's ``DONE`` marker records the sha256 of every file of the unit.

The run kernel writes a unit's folder (``RUN/trials/<id>``, ``RUN/audits/<id>``, ``RUN/units/<id>``)
and then its ``DONE`` marker, which holds ``{"sha256": {file name: sha256}}`` (:func:`write_done`).
Everything that reads a finished unit checks it first (:func:`verify_unit`): a resumed run before it
skips the unit, ``pvsst analyze`` and ``pvsst report`` before they read it, and ``pvsst verify RUN``
for the whole store. A file changed, missing or truncated since it was written is refused with one
line naming it; the remedy is to restore the file, or to delete the unit's folder and resume the run
(its calls are replayed from the cache).

A unit is hashed once per process as long as its files keep their size and modification time, so
``pvsst report``, which reads a run twice, hashes it once. A marker written before markers held hashes
(``ok``, or empty) cannot be checked; such a unit is read as before.

Examples
--------
>>> import tempfile
>>> unit = Path(tempfile.mkdtemp())
>>> _ = (unit / "posts.parquet").write_bytes(b"PAR1 tables PAR1")
>>> write_done(unit)
>>> verify_unit(unit)
1
>>> _ = (unit / "posts.parquet").write_bytes(b"PAR1 edited PAR1")
>>> try:
...     verify_unit(unit)
... except InputError as err:
...     print(Path(err.source).name, "|", err.problem[:40])
posts.parquet | changed since pvsst wrote it (sha256 rec
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from pvsst.core.atomic import write_text
from pvsst.core.errors import InputError
from pvsst.core.input_files import file_sha256, read_json
from pvsst.core.run_folder import run_folder_lock
from pvsst.core.run_layout import AUDITS, DONE, MANIFEST, THREADS, TRIALS, UNITS, is_complete

_VERIFIED: dict[str, tuple] = {}  # unit folder -> the (name, size, mtime) of its files when last verified


def write_done(unit_dir: str | Path) -> None:
    """Write ``unit_dir/DONE`` (atomically) with the sha256 of every other file in ``unit_dir``."""
    unit_dir = Path(unit_dir)
    hashes = {p.name: file_sha256(p) for p in sorted(unit_dir.iterdir()) if p.is_file() and p.name != DONE}
    write_text(unit_dir / DONE, json.dumps({"sha256": hashes}, indent=1, sort_keys=True) + "\n")


def recorded_hashes(unit_dir: str | Path) -> dict[str, str] | None:
    """The file hashes ``unit_dir/DONE`` records; ``None`` for a marker written before markers held
    hashes. An unreadable marker is an ``InputError``."""
    path = Path(unit_dir) / DONE
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(path, DONE, f"unreadable marker ({getattr(err, 'strerror', None) or err})") from None
    if text.strip() in ("ok", ""):
        return None
    try:
        hashes = json.loads(text)["sha256"]
        if not isinstance(hashes, dict):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise InputError(path, DONE, "corrupt marker (not the file hashes pvsst writes); delete the unit's "
                         "folder and resume the run to redo it") from None
    return hashes


def verify_unit(unit_dir: str | Path) -> int:
    """Check every file ``unit_dir/DONE`` records against its hash; return how many files were checked
    (0 for an unverifiable marker). A changed, missing or truncated file is an ``InputError`` naming it."""
    unit_dir = Path(unit_dir)
    hashes = recorded_hashes(unit_dir)
    if hashes is None:
        return 0
    state = _file_state(unit_dir, hashes)
    key = os.path.realpath(unit_dir)
    if _VERIFIED.get(key) == state:
        return len(hashes)
    for name, recorded in sorted(hashes.items()):
        path = unit_dir / name
        try:
            current = file_sha256(path)
        except FileNotFoundError:
            raise InputError(path, "sha256", f"missing: deleted since pvsst wrote it; {_REMEDY}") from None
        except OSError as err:
            raise InputError(path, "sha256", f"unreadable ({err.strerror}); {_REMEDY}") from None
        if current != recorded:
            raise InputError(path, "sha256", f"changed since pvsst wrote it (sha256 recorded {recorded[:12]}, now "
                             f"{current[:12]}); {_REMEDY}")
    _VERIFIED[key] = state
    return len(hashes)


def verify_run(run_dir: str | Path) -> str:
    """Check a whole run folder (``pvsst verify``): its manifest reads, every finished unit of every
    section matches the hashes its ``DONE`` records, and every unit the manifest records as finished is
    there. Return one line saying what was checked; the first problem is an ``InputError`` naming it.

    Examples
    --------
    >>> import tempfile
    >>> run = Path(tempfile.mkdtemp())
    >>> _ = (run / MANIFEST).write_text('{"trials": {"t1": {"status": "done"}}}')
    >>> (run / TRIALS / "t1").mkdir(parents=True); _ = (run / TRIALS / "t1" / "posts.parquet").write_bytes(b"x")
    >>> write_done(run / TRIALS / "t1")
    >>> verify_run(run).split(": ", 1)[1]
    'intact: 1 trials, 0 audit units, 0 survey units (1 files match their sha256)'
    """
    run_dir = Path(run_dir)
    with run_folder_lock(run_dir, shared=True):
        path = run_dir / MANIFEST
        if not path.is_file():
            raise InputError(path, "manifest", "missing: not a pvsst run folder, or its manifest was deleted")
        manifest = read_json(path, "manifest", hint="the manifest is not the JSON pvsst writes")
        counts, files, unchecked = {}, 0, 0
        for section in (TRIALS, AUDITS, UNITS, THREADS):
            units = complete_unit_dirs(run_dir, section)
            for unit in units:
                checked = verify_unit(unit)
                files += checked
                unchecked += not checked
            counts[section] = len(units)
            finished = {unit.name for unit in units}
            for unit_id, entry in sorted((manifest.get(section) or {}).items()):
                if isinstance(entry, dict) and entry.get("status") in ("done", "degraded") and unit_id not in finished:
                    raise InputError(run_dir / section / unit_id, DONE, "missing: the manifest records this unit "
                                     "finished, but its folder is gone or unfinished; resume the run to redo it")
    note = f"; {unchecked} unit(s) written before DONE held hashes, not checked" if unchecked else ""
    threads = f", {counts[THREADS]} threads" if counts[THREADS] else ""
    return (f"{run_dir}: intact: {counts[TRIALS]} trials, {counts[AUDITS]} audit units, {counts[UNITS]} survey "
            f"units{threads} ({files} files match their sha256){note}")


_REMEDY = "restore it, or delete the unit's folder and resume the run to redo it"


def _file_state(unit_dir: Path, hashes: dict[str, str]) -> tuple:
    state = []
    for name in sorted(hashes):
        try:
            info = os.stat(unit_dir / name)
        except OSError:
            return ()
        state.append((name, info.st_size, info.st_mtime_ns, info.st_ino))
    return tuple(state)


def complete_unit_dirs(run_dir: str | Path, section: str, *, verify: bool = True) -> list[Path]:
    """The complete folders under ``run_dir/section`` (:data:`TRIALS`, :data:`AUDITS` or :data:`UNITS`), sorted by
    name; with ``verify`` each is checked against the hashes its ``DONE`` records
    (:func:`verify_unit`: a changed, missing or truncated file is an ``InputError``)."""
    root = Path(run_dir) / section
    if not root.is_dir():
        return []
    units = sorted(p for p in root.iterdir() if p.is_dir() and is_complete(p))
    for unit in units if verify else ():
        verify_unit(unit)
    return units
