"""Preregistration: freeze a spec or instrument by hash into ``SPEC.lock.json``; verify one against its lock.

A study spec (:mod:`pvsst.experiments.spec.study`) and a survey instrument
(:mod:`pvsst.experiments.survey.spec`: a mapping with ``questions``) are frozen the same way: the
document is validated, everything a run of it reads besides the document is checked as the run would
check it (a study's materials, edge list and persona file; an instrument's data, columns, models and
personas) and the lock (:mod:`pvsst.experiments.spec.lock`) is written atomically. Freezing again an
unchanged spec keeps the existing lock (and its time); overwriting a lock of a different spec needs
``force``.

Examples
--------
>>> result = verify("experiments/specs/quickstart.yaml")
>>> result.ok, result.lock.spec_id
(True, 'quickstart')
"""
from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timezone
from pathlib import Path

from pvsst.core.atomic import write_text
from pvsst.core.errors import InputError
from pvsst.core.yaml_file import read_yaml_mapping
from pvsst.experiments.epidemic.runner import epidemic_inputs
from pvsst.experiments.spec.epidemic_study import (
    canonical_epidemic_spec,
    epidemic_spec_sha256,
    is_epidemic_document,
    load_epidemic_spec,
)
from pvsst.experiments.spec.lock import (
    Document,
    Lock,
    Verification,
    changed_materials,
    compare,
    document_materials,
    lock_path,
    package_versions,
    read_lock,
)
from pvsst.experiments.spec.study import canonical_spec, load_spec, spec_sha256
from pvsst.experiments.spec.thread_study import (
    canonical_thread_spec,
    is_thread_document,
    load_thread_spec,
    thread_spec_sha256,
)
from pvsst.experiments.study.files import check_study_files
from pvsst.experiments.survey.checks import check_instrument, data_record
from pvsst.experiments.survey.injection import condition_steerings, injection_files, injection_hashes
from pvsst.experiments.survey.spec import canonical_survey, load_survey, survey_sha256
from pvsst.experiments.threads.personas import thread_personas


def load_document(spec_path: str | Path) -> Document:
    """Validate a study spec or a survey instrument (one with ``questions``); an ``InputError`` if invalid.

    Examples
    --------
    >>> load_document("experiments/surveys/gss2018_spending.yaml").kind
    'survey'
    >>> load_document("experiments/specs/quickstart.yaml").spec_id
    'quickstart'
    """
    data = read_yaml_mapping(spec_path)
    if is_epidemic_document(data):
        epidemic = load_epidemic_spec(spec_path, data)
        return Document("epidemic", epidemic.id, canonical_epidemic_spec(epidemic), epidemic_spec_sha256(epidemic),
                        epidemic)
    if is_thread_document(data):
        threads = load_thread_spec(spec_path, data)
        return Document("threads", threads.id, canonical_thread_spec(threads), thread_spec_sha256(threads), threads)
    if "questions" in data:
        survey = load_survey(spec_path)
        return Document("survey", survey.id, canonical_survey(survey), survey_sha256(survey), survey)
    spec = load_spec(spec_path)
    return Document("study", spec.id, canonical_spec(spec), spec_sha256(spec), spec)


def freeze(spec_path: str | Path, *, force: bool = False) -> Lock:
    """Validate the spec, check everything a run would check before its first call (:func:`check_inputs`)
    and write its lock atomically; return the lock now on disk.

    An existing lock with the same hash (and materials and data) is kept as it is (idempotent). A lock
    of a different spec is an ``InputError`` unless ``force``; so is an unreadable lock.
    """
    document = load_document(spec_path)
    digest = document.sha256
    materials_dir, materials, files = _materials(document, spec_path)
    data = check_inputs(document, spec_path)
    path = lock_path(spec_path)
    if path.exists():
        try:
            existing = read_lock(spec_path)
        except InputError:
            if not force:
                raise
            existing = None
        if existing is not None and existing.spec_sha256 == digest and existing.materials == materials \
                and existing.data == data:
            return existing
        if existing is not None and not force:
            if existing.spec_sha256 == digest and existing.materials == materials:
                name = data.get("path") or data.get("source")
                raise InputError(name, "data.sha256", f"the data differs from that frozen {existing.frozen_at}"
                                 f"{'' if existing.data else ' (the lock records none)'}; pass --force to re-freeze")
            if existing.spec_sha256 == digest:
                changed = changed_materials(existing.materials, materials, materials_dir or Path("."), files)
                raise InputError(changed[0] if changed else str(path), "sha256", f"the study materials differ "
                                 f"from those frozen {existing.frozen_at}; pass --force to re-freeze")
            raise InputError(str(path), "spec_sha256", f"a lock of a different spec exists (frozen "
                             f"{existing.frozen_at}, sha256 {existing.spec_sha256[:12]}...; this spec "
                             f"{digest[:12]}...); pass --force to re-freeze")
    lock = Lock(spec_id=document.spec_id, spec_file=Path(spec_path).name, spec_sha256=digest,
                frozen_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                versions=package_versions(), spec=document.canonical, materials=materials, data=data)
    write_text(path, json.dumps(lock.model_dump(mode="json"), indent=2, sort_keys=True,
                                ensure_ascii=False) + "\n", fsync=True)
    return lock


def _materials(document: Document, spec_path: str | Path) -> tuple[Path | None, dict[str, str], dict[str, Path]]:
    """What the lock fingerprints besides the document: a study's materials and input files
    (:func:`~pvsst.experiments.spec.lock.document_materials`), an instrument's identity vectors."""
    if document.kind == "survey":
        files = injection_files(document.model, Path(spec_path).parent)
        return None, injection_hashes(files), files
    return document_materials(document, spec_path, document.model)


def check_inputs(document: Document, spec_path: str | Path) -> dict[str, str]:
    """Check what a run of ``document`` reads besides the spec, as the run would, before any call: an
    instrument's data, columns, expressions, models, personas and identity vectors
    (:func:`pvsst.experiments.survey.checks.check_instrument`); a study's materials, edge list and persona
    file (:func:`pvsst.experiments.study.files.check_study_files`); an epidemic spec's bank, population
    and parameters (:func:`pvsst.experiments.epidemic.runner.epidemic_inputs`). Return the instrument's data
    fingerprint (``{}`` for a study). Any problem is an ``InputError``."""
    if document.kind == "survey":
        _, personas = check_instrument(document.model)
        condition_steerings(document.model, personas, Path(spec_path).parent)  # vectors, model, attributes, layers
        return data_record(document.model)
    if document.kind == "threads":
        thread_personas(document.model, Path(spec_path).parent)
        return {}
    if document.kind == "epidemic":
        epidemic_inputs(document.model, spec_path)  # the bank, its cells, the population and the parameters
        return {}
    check_study_files(document.model, Path(spec_path).parent)
    return {}


def verify(spec_path: str | Path) -> Verification:
    """Read the spec (or instrument) and its lock and compare them (:func:`compare`); no lock (or an
    invalid spec) is an ``InputError``."""
    document = load_document(spec_path)
    lock = read_lock(spec_path)
    if lock is None:
        raise InputError(str(lock_path(spec_path)), "lock",
                         f"no lock file: run `pvsst prereg freeze {spec_path}` first")
    materials_dir, hashes, files = _materials(document, spec_path)
    result = compare(document.canonical, lock, spec_name=Path(spec_path).name, materials_dir=materials_dir,
                     materials=hashes, files=files)
    if document.kind == "survey" and lock.data:
        current = data_record(document.model)
        if current.get("sha256") != lock.data.get("sha256"):
            name = current.get("path") or current.get("source")
            result = dataclasses.replace(result, ok=False, changed_data=[
                f"{name} (frozen sha256 {lock.data['sha256'][:12]}..., now {current['sha256'][:12]}...)"])
    return result
