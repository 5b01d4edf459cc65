"""Identity injection in a survey run: each steered condition's vectors file and each persona's steering.

A condition with an ``identity_injection`` section (:mod:`pvsst.experiments.spec.identity_injection`)
names a vectors file. :func:`injection_files` lists those files by field, :func:`injection_hashes`
fingerprints them for the preregistration lock (an edited vectors file fails ``pvsst prereg verify``
and is refused by ``pvsst survey run``, like an edited study material), and :func:`condition_steerings`
gives every persona of the run its :class:`~pvsst.sim.llm.steering.Steering` per steered condition,
checking the file, its model, layers, attributes and values before any call. The survey's units attach
the steering to each request of that persona (:func:`pvsst.experiments.survey.units.unit_requests`),
whose response-cache key then holds the vectors' sha256.

Examples
--------
>>> from pvsst.experiments.survey.spec import load_survey
>>> spec = load_survey("experiments/surveys/gss2018_spending.yaml")
>>> injection_files(spec, "experiments/surveys"), injection_hashes({})
({}, {})
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from pvsst.core.errors import InputError
from pvsst.core.input_files import file_sha256
from pvsst.experiments.survey.spec import SurveySpec
from pvsst.sim.llm.steering import Steering


def vectors_field(condition_id: str) -> str:
    """How the lock and error messages name a condition's vectors file.

    Examples
    --------
    >>> vectors_field("psii")
    'conditions.psii.identity_injection.vectors'
    """
    return f"conditions.{condition_id}.identity_injection.vectors"


def injection_files(spec: SurveySpec, spec_dir: str | Path) -> dict[str, Path]:
    """``{field: path}`` of every steered condition's vectors file (relative paths read from ``spec_dir``,
    the instrument's folder)."""
    return {vectors_field(c.id): c.identity_injection.vectors_path(spec_dir)
            for c in spec.conditions if c.identity_injection is not None}


def injection_hashes(files: dict[str, Path]) -> dict[str, str]:
    """sha256 of each file of :func:`injection_files`; a missing or unreadable one is an ``InputError``."""
    hashes = {}
    for field, path in files.items():
        try:
            hashes[field] = file_sha256(path)
        except OSError as err:
            raise InputError(str(path), field, f"cannot read the identity vectors: {err.strerror or err}") from None
    return hashes


def condition_steerings(spec: SurveySpec, personas: pd.DataFrame,
                        spec_dir: str | Path) -> dict[str, dict[str, Steering]]:
    """``{condition_id: {persona_id: Steering}}`` of every steered condition, for every persona of
    ``personas``; the noise seed of a persona comes from the instrument's ``seed``. The vectors must
    have been measured on the file of every embedded model the instrument asks (``InputError``)."""
    return {condition.id: condition.identity_injection.steerings(personas, spec_dir, spec.asked_models,
                                                                  seed=spec.seed)
            for condition in spec.conditions if condition.identity_injection is not None}
