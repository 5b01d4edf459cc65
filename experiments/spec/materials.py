"""Where a spec's study materials are, and the engine protocol of its trials with that directory resolved.

``protocol.materials: DIR`` is read relative to the spec file; absent, the materials pvsst ships
(``sim/materials/pvsst``). Their file hashes are frozen with the spec (:mod:`pvsst.experiments.spec.prereg`).

Examples
--------
>>> from pvsst.experiments.spec.study import load_spec
>>> spec = load_spec("experiments/specs/quickstart.yaml")
>>> spec_materials_dir(spec, Path("experiments/specs")).name
'pvsst'
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from pvsst.experiments.spec.study import StudySpec
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


def spec_materials_hashes(spec: StudySpec, directory: Path) -> dict[str, str]:
    """sha256 of every file the spec's materials contribute to its runs and analysis, by file name: the
    materials files of ``directory`` and, when ``analysis.stance_judge`` names a model, the judge's two
    templates (the directory's pair, else pvsst's): a model judge's wording governs the analysis.

    Examples
    --------
    >>> from pvsst.experiments.spec.study import load_spec
    >>> spec = load_spec("experiments/specs/quickstart.yaml")
    >>> "judge.txt" in spec_materials_hashes(spec, spec_materials_dir(spec, Path("experiments/specs")))
    False
    """
    hashes = materials_hashes(directory)
    if spec.analysis.stance_judge not in (None, "lexicon"):
        from pvsst.sim.judges.materials import load_judge_materials

        hashes.update(load_judge_materials(directory).hashes)
    return hashes
