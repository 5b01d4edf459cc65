"""The preregistration lock: ``SPEC.lock.json`` beside a spec, read and compared with the spec as it is now.

Two kinds of document are frozen the same way (:mod:`pvsst.experiments.prereg.freeze` writes the lock):
a study spec (:mod:`pvsst.experiments.spec.study`) and a survey instrument
(:mod:`pvsst.experiments.survey.spec`), which carries its run settings, so one lock covers both.

The lock holds the sha256 of the canonical spec (:func:`pvsst.experiments.spec.study.spec_sha256`), the UTC time
of freezing, the versions of pvsst, Python and the key packages, a copy of the canonical spec, so a
later edit can be shown as a diff against exactly what was frozen, and the sha256 of every file of the
study materials (``protocol.materials``: prompt templates, persona tables, account ids; and the stance
judge's two templates when ``analysis.stance_judge`` names a model), so editing a template after
freezing is refused like editing the spec.

Examples
--------
>>> lock = read_lock("experiments/specs/quickstart.yaml")
>>> lock.spec_id, compare(lock.spec, lock, materials=lock.materials).ok
('quickstart', True)
>>> compare({**lock.spec, "id": "edited"}, lock, materials=lock.materials).changed_fields
['id: "quickstart" -> "edited"']
"""
from __future__ import annotations

import difflib
import functools
import json
import platform
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pvsst.core.errors import InputError
from pvsst.experiments.epidemic.bank_source import bank_input_files, bank_input_hashes
from pvsst.experiments.spec.materials import spec_input_files, spec_materials_dir, spec_materials_hashes
from pvsst.experiments.spec.study import canonical_sha256, load_spec
from pvsst.experiments.spec.thread_study import thread_files_hashes, thread_input_files, thread_materials_dir
from pvsst.sim.materials import default_materials_dir

LOCK_SUFFIX = ".lock.json"
VERSIONED_PACKAGES = ("pvsst", "mesa", "litellm", "numpy", "pandas", "pydantic", "networkx", "scipy",
                      "statsmodels", "scikit-learn", "pyarrow", "llama-cpp-python")
"""Distributions whose versions a lock records (besides Python itself)."""


class Lock(BaseModel):
    """The content of ``SPEC.lock.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lock_version: Literal[1] = 1
    spec_id: str
    spec_file: str
    spec_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    frozen_at: str
    versions: dict[str, str]
    spec: dict[str, Any]
    materials: dict[str, str] = Field(default_factory=dict)
    """sha256 at freezing of every file a run reads besides the spec: the materials files by file name,
    the files named by spec fields (``personas.path``, ``trial.network.path``) by field
    (:func:`pvsst.experiments.spec.materials.spec_materials_hashes`); empty in locks written before
    materials existed."""
    data: dict[str, str] = Field(default_factory=dict, exclude_if=lambda value: not value)
    """An instrument's data fingerprint at freezing (:func:`pvsst.experiments.survey.checks.data_record`);
    empty for a study spec and in locks written before data was locked."""


@dataclass(frozen=True)
class Verification:
    """The result of comparing a spec with its lock.

    ``diff`` holds unified-diff lines (frozen -> current) of the canonical spec as YAML;
    ``changed_fields`` names each changed value as ``"dotted.path: old -> new"``;
    ``changed_materials`` lists the files read besides the spec (paths: materials, persona table, edge
    list) whose content differs from the frozen one;
    ``version_changes`` lists packages whose version differs from the one recorded at freezing
    (informative only: it does not make the verification fail); ``changed_data`` names an instrument's
    data set when its fingerprint differs from the frozen one.
    """

    ok: bool
    frozen_sha256: str
    current_sha256: str
    lock: Lock
    diff: list[str] = field(default_factory=list)
    changed_fields: list[str] = field(default_factory=list)
    changed_materials: list[str] = field(default_factory=list)
    version_changes: list[str] = field(default_factory=list)
    changed_data: list[str] = field(default_factory=list)


def lock_path(spec_path: str | Path) -> Path:
    """The lock file beside a spec: ``quickstart.yaml -> quickstart.yaml.lock.json``.

    Examples
    --------
    >>> lock_path("experiments/specs/quickstart.yaml").as_posix()
    'experiments/specs/quickstart.yaml.lock.json'
    """
    spec_path = Path(spec_path)
    return spec_path.with_name(spec_path.name + LOCK_SUFFIX)


def package_versions() -> dict[str, str]:
    """Python's version and the installed version of each of :data:`VERSIONED_PACKAGES`.

    Examples
    --------
    >>> import platform
    >>> package_versions()["python"] == platform.python_version()
    True
    """
    return dict(_installed_versions())


@functools.cache
def _installed_versions() -> tuple[tuple[str, str], ...]:
    # Read once per process: each lookup parses a package's METADATA file, and a process that freezes,
    # runs and analyses many studies (the spec-coverage tests: ~4,000 lookups) spent seconds on it.
    versions = [("python", platform.python_version())]
    for name in VERSIONED_PACKAGES:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            versions.append((name, "not installed"))
    return tuple(versions)


def read_lock(spec_path: str | Path) -> Lock | None:
    """The lock of ``spec_path``, or ``None`` when there is none; a corrupt lock is an ``InputError``.

    Examples
    --------
    >>> read_lock("experiments/specs/quickstart.yaml").spec_id, read_lock("no/such/spec.yaml")
    ('quickstart', None)
    """
    path = lock_path(spec_path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as err:
        raise InputError(str(path), "lock", f"cannot read ({err.strerror})") from None
    try:
        lock = Lock.model_validate_json(text)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "lock"
        raise InputError(str(path), where, f"corrupt lock file: {first['msg']}") from None
    recomputed = canonical_sha256(lock.spec)
    if recomputed != lock.spec_sha256:
        raise InputError(str(path), "spec_sha256", f"corrupt lock file: its spec copy hashes to "
                                                   f"{recomputed[:12]}..., not {lock.spec_sha256[:12]}...")
    return lock


@dataclass(frozen=True)
class Document:
    """A validated spec or instrument as the lock sees it: its id, canonical form and sha256."""

    kind: Literal["study", "survey", "threads", "epidemic"]
    spec_id: str
    canonical: dict[str, Any]
    sha256: str
    model: Any = None  # the validated StudySpec or SurveySpec


def compare(current: dict, lock: Lock, *, spec_name: str = "spec", materials_dir: Path | None = None,
            materials: dict[str, str] | None = None, files: dict[str, Path] | None = None) -> Verification:
    """Compare a loaded spec (its canonical form, :func:`~pvsst.experiments.spec.study.canonical_spec`) and the
    sha256 of the files it reads (``materials``: the materials files of ``materials_dir`` and the input
    ``files`` by field) with a loaded lock; reads no spec or lock file.

    Examples
    --------
    >>> from pvsst.experiments.spec.study import canonical_spec
    >>> from pvsst.sim.materials import materials_hashes
    >>> spec = load_spec("experiments/specs/quickstart.yaml")
    >>> directory = spec_materials_dir(spec, Path("experiments/specs"))
    >>> compare(canonical_spec(spec), read_lock("experiments/specs/quickstart.yaml"), materials_dir=directory,
    ...         materials=materials_hashes(directory)).ok
    True
    """
    digest = canonical_sha256(current)
    versions = package_versions()
    version_changes = [f"{name}: {lock.versions[name]} -> {versions.get(name, 'not installed')}"
                       for name in sorted(lock.versions) if lock.versions[name] != versions.get(name, "not installed")]
    materials = changed_materials(lock.materials, materials or {}, materials_dir or Path("."), files)
    if digest == lock.spec_sha256 and not materials:
        return Verification(True, lock.spec_sha256, digest, lock, version_changes=version_changes)
    diff = list(difflib.unified_diff(canonical_yaml(lock.spec).splitlines(), canonical_yaml(current).splitlines(),
                                     fromfile=f"{spec_name}{LOCK_SUFFIX} (frozen)",
                                     tofile=f"{spec_name} (current)", lineterm=""))
    return Verification(False, lock.spec_sha256, digest, lock, diff=diff,
                        changed_fields=changed_fields(lock.spec, current), changed_materials=materials,
                        version_changes=version_changes)


def document_materials(document: Document, spec_path: str | Path,
                       spec: Any = None) -> tuple[Path | None, dict[str, str], dict[str, Path]]:
    """The study materials directory of a study spec, the sha256 of every file a run reads besides the
    spec (:func:`~pvsst.experiments.spec.materials.spec_materials_hashes`; a missing file is an
    ``InputError`` naming it) and the input files by field; ``(None, {}, {})`` for a survey instrument,
    whose data is locked by its own record."""
    if document.kind == "epidemic":
        files = bank_input_files(document.model, spec_path)
        return None, bank_input_hashes(files), files
    if document.kind == "threads":
        spec_dir = Path(spec_path).parent
        return (thread_materials_dir(document.model, spec_dir) or default_materials_dir().resolve(),
                thread_files_hashes(document.model, spec_dir), thread_input_files(document.model, spec_dir))
    if document.kind != "study":
        return None, {}, {}
    spec = spec if spec is not None else load_spec(spec_path)
    spec_dir = Path(spec_path).parent
    directory = spec_materials_dir(spec, spec_dir)
    return directory, spec_materials_hashes(spec, directory, spec_dir), spec_input_files(spec, spec_dir)


def changed_materials(frozen: dict[str, str], current: dict[str, str], directory: Path,
                      files: dict[str, Path] | None = None) -> list[str]:
    """Paths of the files whose hash differs from the frozen one (or that the lock lacks): a materials file
    under ``directory``, or the input file a spec field names (``files``: field -> path).

    Examples
    --------
    >>> changed_materials({"post.txt": "a", "vote.txt": "b"}, {"post.txt": "a", "vote.txt": "c"}, Path("m"))
    ['m/vote.txt']
    >>> changed_materials({}, {"post.txt": "a"}, Path("m"))
    ['m/post.txt']
    >>> changed_materials({"personas.path": "a"}, {"personas.path": "b"}, Path("m"), {"personas.path": Path("p.csv")})
    ['p.csv']
    """
    files = files or {}
    return [str(files.get(name, directory / name)) for name in sorted(set(frozen) | set(current))
            if frozen.get(name) != current.get(name)]


def canonical_yaml(data: dict) -> str:
    """A canonical spec as key-sorted block YAML (the form diffs are shown in).

    Examples
    --------
    >>> print(canonical_yaml({"trial": {"n_rounds": 6, "n_agents": 12}}), end="")
    trial:
      n_agents: 12
      n_rounds: 6
    """
    return yaml.safe_dump(data, sort_keys=True, default_flow_style=False, allow_unicode=True, width=120)


def changed_fields(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Every leaf that differs between two JSON-like values, as ``"path: old -> new"``.

    Examples
    --------
    >>> changed_fields({"trial": {"n_agents": 12, "n_rounds": 6}}, {"trial": {"n_agents": 10, "n_rounds": 6}})
    ['trial.n_agents: 12 -> 10']
    >>> changed_fields({"seeds": [1, 2]}, {"seeds": [1, 3, 4]})
    ['seeds[1]: 2 -> 3', 'seeds[2]: (absent) -> 4']
    """
    if isinstance(old, dict) and isinstance(new, dict):
        changes = []
        for key in sorted(set(old) | set(new), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            changes += changed_fields(old.get(key, _ABSENT), new.get(key, _ABSENT), path)
        return changes
    if isinstance(old, list) and isinstance(new, list):
        changes = []
        for index in range(max(len(old), len(new))):
            changes += changed_fields(old[index] if index < len(old) else _ABSENT,
                                      new[index] if index < len(new) else _ABSENT, f"{prefix}[{index}]")
        return changes
    if old == new and type(old) is type(new):
        return []
    return [f"{prefix}: {_show(old)} -> {_show(new)}"]


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def _show(value: Any) -> str:
    text = value if isinstance(value, _Absent) else json.dumps(value, ensure_ascii=False)
    text = str(text)
    return text if len(text) <= 60 else text[:57] + "..."
