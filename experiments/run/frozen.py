"""Open a frozen input: a study spec or survey instrument is run only as frozen, or with a recorded deviation.

:func:`check_frozen` reads the input's lock once and compares the input (in canonical form) and its
files it reads (materials, persona table, edge list) with it. An unfrozen or changed input is refused (exit 2) unless a
deviation text is
given; the deviation is then recorded in the manifest with both hashes and what changed.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> spec = Path(tempfile.mkdtemp()) / "study.yaml"
>>> digest, record, lock = check_frozen({"id": "demo"}, spec, "pilot")
>>> record["text"], record["frozen_sha256"], lock
('pilot', None, None)
"""
from __future__ import annotations

from pathlib import Path

from pvsst.core.errors import InputError
from pvsst.experiments.run.manifest import utc_now
from pvsst.experiments.spec.lock import Lock, changed_fields, compare, read_lock
from pvsst.experiments.spec.study import canonical_sha256


def check_frozen(canonical: dict, spec_path: Path, deviation: str | None, materials_dir: Path | None = None,
                 materials: dict[str, str] | None = None,
                 files: dict[str, Path] | None = None) -> tuple[str, dict | None, Lock | None]:
    """Return (current sha256, deviation record or None, the lock or None) for an input in canonical form,
    the sha256 of the files it reads (materials files, input ``files`` by field) and the lock beside
    ``spec_path``; refuse an unfrozen or changed input."""
    lock = read_lock(spec_path)
    if lock is None:
        if deviation is None:
            raise InputError(spec_path, "lock", f"spec is not frozen: run `pvsst prereg freeze {spec_path}` "
                             "first, or pass --deviation TEXT")
        current = canonical_sha256(canonical)
        return current, {"text": deviation, "frozen_sha256": None, "current_sha256": current, "at": utc_now()}, None
    check = compare(canonical, lock, spec_name=spec_path.name, materials_dir=materials_dir, materials=materials,
                    files=files)
    if check.ok:
        return check.current_sha256, ({"text": deviation, "frozen_sha256": check.frozen_sha256,
                                       "current_sha256": check.current_sha256, "at": utc_now()}
                                      if deviation else None), lock
    if deviation is None and check.frozen_sha256 == check.current_sha256:
        raise InputError(check.changed_materials[0], "sha256", "changed since the spec was frozen (a file the "
                         f"run reads; {len(check.changed_materials)} file(s) differ); re-freeze or pass --deviation "
                         f"TEXT")
    if deviation is None:
        raise InputError(spec_path, "spec_sha256", f"hash mismatch: spec changed since it was frozen (frozen "
                         f"{check.frozen_sha256[:12]}, now {check.current_sha256[:12]}; changed: "
                         f"{'; '.join(check.changed_fields[:3])}); re-freeze or pass --deviation TEXT")
    return check.current_sha256, {"text": deviation, "frozen_sha256": check.frozen_sha256,
                                  "current_sha256": check.current_sha256, "changed_fields": check.changed_fields,
                                  "changed_materials": check.changed_materials, "at": utc_now()}, lock


def override_record(given: dict, before: dict, after: dict, frozen_sha256: str, current_sha256: str,
                    prefix: str = "") -> dict | None:
    """The deviation record of command-line overrides (``given``: option -> value) that turned the input
    (or its section ``prefix``) from ``before`` into ``after`` (JSON forms); ``None`` when none was given
    or nothing changed.

    Examples
    --------
    >>> record = override_record({"n": 20}, {"personas": {"n": 10}}, {"personas": {"n": 20}}, "ab", "cd")
    >>> record["overrides"], record["changed_fields"]
    ({'n': 20}, ['personas.n: 10 -> 20'])
    >>> override_record({"n": None}, {}, {}, "ab", "ab") is None
    True
    """
    given = {name: value for name, value in given.items() if value is not None}
    changed = changed_fields(before, after, prefix)
    if not given or not changed:
        return None
    return {"text": "command-line overrides", "overrides": given, "changed_fields": changed,
            "frozen_sha256": frozen_sha256, "current_sha256": current_sha256, "at": utc_now()}
