"""The files a study's trials read besides the spec, shipped to workers as bytes, not as paths.

A spec may name files next to it: a materials directory (``protocol.materials``), an edge list
(``trial.network.path``) and identity vectors (``identity_injection.vectors``). A worker on another
machine does not see the driver's disk, so the driver reads them once (:func:`collect_study_files`)
and every block task carries their content; the worker writes them into its own scratch folder
(:meth:`StudyFiles.stage`, once per content) and runs the trials from there. The same path is taken
by every executor, so where a trial ran never matters.

Examples
--------
>>> from pvsst.experiments.spec.study import load_spec
>>> files, origins = collect_study_files(load_spec("experiments/specs/quickstart.yaml"), Path("experiments/specs"))
>>> files.materials, files.edge_list, files.vectors, origins   # pvsst's own materials ship with the package
((), None, None, {})
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pvsst.core.atomic import atomic_directory
from pvsst.core.errors import InputError
from pvsst.core.input_files import regular_file
from pvsst.core.run_layout import MATERIALS
from pvsst.experiments.spec.materials import spec_materials_dir
from pvsst.experiments.spec.study import StudySpec
from pvsst.experiments.study.injection import check_study_injection
from pvsst.personas.records import read_personas
from pvsst.sim.accounts import honest_ids
from pvsst.sim.materials import MATERIAL_FILES, load_materials, materials_hashes
from pvsst.sim.network import build_follow_graph

SCRATCH_ENV = "PVSST_SCRATCH"
"""Where a worker stages study files (default: the system's temporary folder)."""


@dataclass(frozen=True)
class StagedFiles:
    """Where a worker wrote a study's files: its materials directory, edge list and identity vectors
    (``None``: none)."""

    materials_dir: Path | None = None
    edge_list: Path | None = None
    vectors: Path | None = None


@dataclass(frozen=True)
class StudyFiles:
    """The content of a study's own files: ``materials`` (file name, bytes), the ``edge_list`` bytes and
    the identity ``vectors`` bytes, each under its file name. No path of the driver's: this is what a
    block task carries."""

    materials: tuple[tuple[str, bytes], ...] = ()
    edge_list: bytes | None = None
    edge_list_name: str = "edges.txt"
    vectors: bytes | None = None
    vectors_name: str = "vectors.npz"

    def digest(self) -> str:
        h = hashlib.sha256()
        for name, data in self.materials:
            h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
        h.update(b"edges\0" + (hashlib.sha256(self.edge_list).digest() if self.edge_list is not None else b"-"))
        h.update(self.edge_list_name.encode())
        if self.vectors is not None:  # absent otherwise: the folders of unsteered studies keep their names
            h.update(b"vectors\0" + hashlib.sha256(self.vectors).digest() + self.vectors_name.encode())
        return h.hexdigest()

    def stage(self, scratch: str | Path | None = None) -> StagedFiles:
        """Write the files under ``scratch/pvsst-study-files/<digest>`` (once: a folder of that content
        is reused) and return where they are.

        Examples
        --------
        >>> import tempfile
        >>> files = StudyFiles(edge_list=b"a00 a01\\n")
        >>> staged = files.stage(tempfile.mkdtemp())
        >>> staged.edge_list.read_text(), staged.materials_dir is None
        ('a00 a01\\n', True)
        """
        if not self.materials and self.edge_list is None and self.vectors is None:
            return StagedFiles()
        root = Path(scratch or os.environ.get(SCRATCH_ENV) or tempfile.gettempdir()) / STAGING_FOLDER
        target = root / self.digest()
        if not target.is_dir():
            root.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
            try:
                if self.materials:
                    (tmp / MATERIALS).mkdir()
                    for name, data in self.materials:
                        (tmp / MATERIALS / name).write_bytes(data)
                if self.edge_list is not None:
                    (tmp / self.edge_list_name).write_bytes(self.edge_list)
                if self.vectors is not None:
                    (tmp / VECTORS_FOLDER).mkdir()
                    (tmp / VECTORS_FOLDER / self.vectors_name).write_bytes(self.vectors)
                os.replace(tmp, target)
            except OSError:
                shutil.rmtree(tmp, ignore_errors=True)
                if not target.is_dir():  # another worker of this machine staged the same files first
                    raise
        return StagedFiles(materials_dir=target / MATERIALS if self.materials else None,
                           edge_list=target / self.edge_list_name if self.edge_list is not None else None,
                           vectors=target / VECTORS_FOLDER / self.vectors_name if self.vectors is not None else None)

    def name_the_originals(self, message: str, origins: dict[str, str]) -> str:
        """``message`` (a worker's error) with the paths of staged copies replaced by the driver's paths
        they came from (``origins`` of :func:`collect_study_files`), wherever the worker staged them.

        Examples
        --------
        >>> files = StudyFiles(edge_list=b"a00 zz9\\n")
        >>> files.name_the_originals(f"/w/{STAGING_FOLDER}/{files.digest()}/edges.txt: bad", {"edge_list": "/me/e.txt"})
        '/me/e.txt: bad'
        """
        where = rf"\S*{re.escape(STAGING_FOLDER)}/{self.digest()}/"
        for what, name in (("materials", "materials"), ("edge_list", self.edge_list_name),
                           ("vectors", f"{VECTORS_FOLDER}/{self.vectors_name}")):
            if what in origins:
                message = re.sub(where + re.escape(name), lambda _: origins[what], message)
        return message


STAGING_FOLDER = "pvsst-study-files"
VECTORS_FOLDER = "identity_vectors"


def collect_study_files(spec: StudySpec, spec_dir: Path) -> tuple[StudyFiles, dict[str, str]]:
    """Read the materials directory, edge list and identity vectors ``spec`` names (relative to
    ``spec_dir``): their content for the block tasks, and the paths they came from (``materials`` /
    ``edge_list`` / ``vectors``, for the driver's messages). pvsst's own materials are not sent (every
    worker has the package). An unreadable file is an ``InputError``."""
    materials: tuple[tuple[str, bytes], ...] = ()
    origins = {}
    if spec.protocol.to_protocol().materials is not None:
        directory = spec_materials_dir(spec, spec_dir)
        materials = tuple((name, _read(directory / name, "protocol.materials")) for name in sorted(MATERIAL_FILES))
        origins["materials"] = str(directory)
    edge_list, name = None, "edges.txt"
    network = spec.trial.network
    if network.kind == "edgelist" and network.path is not None:
        path = Path(network.path)
        path = path if path.is_absolute() else Path(spec_dir) / path
        edge_list, name = _read(path, "trial.network.path"), path.name
        origins["edge_list"] = str(path)
    vectors, vectors_name = None, "vectors.npz"
    if spec.identity_injection is not None:
        path = spec.identity_injection.vectors_path(spec_dir)
        vectors, vectors_name = _read(path, "identity_injection.vectors"), path.name
        origins["vectors"] = str(path)
    return StudyFiles(materials=materials, edge_list=edge_list, edge_list_name=name, vectors=vectors,
                      vectors_name=vectors_name), origins


def _read(path: Path, field: str) -> bytes:
    regular_file(path, field)
    try:
        return path.read_bytes()
    except OSError as err:
        raise InputError(str(path), field, f"cannot read ({err.strerror or err})") from None


def check_study_files(spec: StudySpec, spec_dir: Path) -> None:
    """Read and check every file a run of ``spec`` (a spec file in ``spec_dir``) reads, as the run would:
    the materials (templates, persona tables, account ids), the edge list (its lines and agent ids), a
    persona file and the identity vectors (:func:`~pvsst.experiments.study.injection.check_study_injection`).
    A problem is an ``InputError`` naming the file.

    Examples
    --------
    >>> from pvsst.experiments.spec.study import load_spec
    >>> check_study_files(load_spec("experiments/specs/quickstart.yaml"), Path("experiments/specs"))
    """
    materials = load_materials(spec_materials_dir(spec, spec_dir))
    files, origins = collect_study_files(spec, spec_dir)
    if files.edge_list is not None:
        protocol = spec.protocol.to_protocol()
        n = spec.trial.n_agents
        ids = (materials.account_ids("honest", n) if protocol.account_ids == "materials"
               else honest_ids(n, protocol.account_ids))
        network = spec.trial.network.model_copy(update={"path": origins["edge_list"]})
        build_follow_graph(network, ids, None, np.random.default_rng(0))
    if spec.personas.source == "file":
        path = Path(spec.personas.path)
        read_personas(path if path.is_absolute() else Path(spec_dir) / path)
    check_study_injection(spec, spec_dir)


def write_materials(run_dir: str | Path, source: str | Path) -> dict[str, str]:
    """Copy the study materials ``source`` into ``run_dir/materials`` (atomically); return their sha256s.

    The run store then holds the wording its prompts were made from, for the report's template-echo
    audit and for anyone reading the run later. A copy that holds these files already (a resumed run)
    is left as it is; another one is replaced only if every file in it is pvsst's.

    Examples
    --------
    >>> import tempfile
    >>> from pvsst.sim.materials import default_materials_dir
    >>> hashes = write_materials(tempfile.mkdtemp(), default_materials_dir())
    >>> hashes == materials_hashes(default_materials_dir())
    True
    """
    hashes = materials_hashes(source)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        if materials_hashes(run_dir / MATERIALS) == hashes:
            return hashes
    except InputError:  # no copy yet, or an incomplete one: write it
        pass
    with atomic_directory(run_dir / MATERIALS, ledger=True) as tmp:
        for name in MATERIAL_FILES:
            shutil.copy2(Path(source) / name, tmp / name)
    return hashes
