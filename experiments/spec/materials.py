"""Where a spec's study materials are, the other files it reads, and the hashes the lock keeps of them all.

``protocol.materials: DIR`` is read relative to the spec file; absent, the materials pvsst ships
(``sim/materials/pvsst``). Every other file a run reads is named by a spec field
(:data:`INPUT_FILE_FIELDS`: the persona table, the edge list, the identity vectors), also relative to
the spec file. The hashes of all of them are frozen with the spec (:func:`spec_materials_hashes`,
:mod:`pvsst.experiments.spec.lock`) and compared again by every run.

Examples
--------
>>> from pvsst.experiments.spec.study import load_spec
>>> spec = load_spec("experiments/specs/quickstart.yaml")
>>> spec_materials_dir(spec, Path("experiments/specs")).name
'pvsst'
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from pvsst.core.input_files import file_sha256, regular_file
from pvsst.experiments.spec.study import StudySpec
from pvsst.sim.judges.materials import load_judge_materials
from pvsst.sim.materials import default_materials_dir, materials_hashes
from pvsst.sim.protocol import Protocol


def spec_protocol(spec: StudySpec, spec_dir: Path | None = None) -> Protocol:
    """The engine protocol of the spec's trials; a ``materials`` directory made absolute (``None`` stays:
    pvsst's own materials)."""
    protocol = spec.protocol.to_protocol()
    if protocol.materials is None:
        return protocol
    return dataclasses.replace(protocol, materials=str(resolve_materials_dir(protocol.materials, spec_dir)))


def resolve_materials_dir(materials: str | None, spec_dir: Path | None = None) -> Path:
    """``materials`` relative to ``spec_dir`` (``None``: pvsst's own materials)."""
    if materials is None:
        return default_materials_dir().resolve()
    path = Path(materials)
    if not path.is_absolute() and spec_dir is not None:
        path = Path(spec_dir) / path
    return path.resolve()


def spec_materials_dir(spec: StudySpec, spec_dir: Path | None = None) -> Path:
    """The materials directory of ``spec`` (a spec file in ``spec_dir``)."""
    return resolve_materials_dir(spec.protocol.to_protocol().materials, spec_dir)


INPUT_FILE_FIELDS: dict[str, Callable[[StudySpec], str | None]] = {
    "personas.path": lambda spec: spec.personas.path if spec.personas.source == "file" else None,
    "trial.network.path": lambda spec: spec.trial.network.path if spec.trial.network.kind == "edgelist" else None,
    "identity_injection.vectors": lambda spec: (spec.identity_injection.vectors
                                                if spec.identity_injection is not None else None),
}
"""Each spec field that names a file a run reads besides the materials, and how to read the field. A new
kind of input file is covered by the lock and the run's check once named here."""


def spec_input_files(spec: StudySpec, spec_dir: Path | None = None) -> dict[str, Path]:
    """The files the spec's :data:`INPUT_FILE_FIELDS` name, by field, relative to ``spec_dir``.

    Examples
    --------
    >>> from pvsst.experiments.spec.study import load_spec
    >>> spec_input_files(load_spec("experiments/specs/quickstart.yaml"))
    {}
    """
    files = {}
    for field, value_of in INPUT_FILE_FIELDS.items():
        value = value_of(spec)
        if value is not None:
            path = Path(value)
            files[field] = path if path.is_absolute() or spec_dir is None else Path(spec_dir) / path
    return files


def spec_materials_hashes(spec: StudySpec, directory: Path, spec_dir: Path | None = None) -> dict[str, str]:
    """sha256 of every file the spec's runs and analysis read besides the spec: the materials files of
    ``directory`` by file name; when ``analysis.stance_judge`` names a model, the judge's two templates
    (the directory's pair, else pvsst's): a model judge's wording governs the analysis; and each file of
    :func:`spec_input_files` (relative to ``spec_dir``), by the field naming it. A missing file, or one
    that is not a regular file, is an ``InputError``.

    Examples
    --------
    >>> from pvsst.experiments.spec.study import load_spec
    >>> spec = load_spec("experiments/specs/quickstart.yaml")
    >>> "judge.txt" in spec_materials_hashes(spec, spec_materials_dir(spec, Path("experiments/specs")))
    False
    """
    hashes = materials_hashes(directory)
    if spec.analysis.stance_judge not in (None, "lexicon"):
        hashes.update(load_judge_materials(directory).hashes)
    for field, path in spec_input_files(spec, spec_dir).items():
        hashes[field] = file_sha256(regular_file(path, field))
    return hashes
