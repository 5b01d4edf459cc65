"""Identity injection in a study: each honest agent's steering, its check before any call, the profile ablation.

A study with an ``identity_injection`` section
(:class:`~pvsst.experiments.spec.identity_injection.StudyIdentityInjectionSpec`) steers every post and
vote call of an honest agent on the embedded model with its persona's control vector: the sum of the
persona's attribute vectors times ``coef``, plus noise from the persona's own seed. The noise seed is
drawn from the trial's seed, so the arms of one block (one seed) steer a persona alike and another
seed gives another draw. Adversary accounts (the materials' blend-in personas, which carry no
attributes) are not steered. The vectors file is locked with the spec
(:data:`~pvsst.experiments.spec.materials.INPUT_FILE_FIELDS`) and a block task carries its bytes, like
the materials (:mod:`pvsst.experiments.study.files`).

Examples
--------
>>> from pvsst.experiments.spec.study import load_spec
>>> spec = load_spec("experiments/specs/quickstart.yaml")
>>> trial_steerings(spec, None, None, seed=101) is None   # no identity_injection section: nothing steered
True
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from pvsst.core.errors import InputError
from pvsst.experiments.spec.study import StudySpec
from pvsst.experiments.study.personas import persona_frame
from pvsst.sim.llm.steering import Steering


def trial_steerings(spec: StudySpec, personas: pd.DataFrame | None, vectors: str | Path | None, *,
                    seed: int) -> dict[str, Steering] | None:
    """``{persona_id: Steering}`` of every persona of the run's table for one trial of seed ``seed``, read
    from the vectors file at ``vectors`` (a worker's staged copy); ``None`` for a study without identity
    injection. A problem is an ``InputError`` naming the file, field or persona column."""
    section = spec.identity_injection
    if section is None:
        return None
    if personas is None or vectors is None:
        raise InputError("identity_injection", "vectors", "a steered trial needs the run's persona table and "
                         "the vectors file")
    return section.steerings(personas, ".", spec.factors.models, seed=seed, vectors=vectors)


def profiled(spec: StudySpec, personas: pd.DataFrame | None) -> pd.DataFrame | None:
    """The persona table the agents read: as it is, or with every card empty under ``profile: false``
    (PSII's ablation: the prompts' persona line says nothing, the vectors alone say who the agent is).

    Examples
    --------
    >>> from pvsst.experiments.spec.study import load_spec
    >>> spec = load_spec("experiments/specs/quickstart.yaml")
    >>> table = pd.DataFrame({"persona_id": ["p1"], "card": ["a nurse"]})
    >>> profiled(spec, table)["card"].tolist()
    ['a nurse']
    """
    section = spec.identity_injection
    if section is None or section.profile or personas is None:
        return personas
    return personas.assign(card="")


def check_study_injection(spec: StudySpec, spec_dir: Path) -> None:
    """Check, before any call, what a steered run of ``spec`` (a spec file in ``spec_dir``) needs: the
    vectors file (readable, measured on the file of every model of the study, holding the layers), a
    column of the persona records for every attribute and a vector for every value they hold. Nothing
    for a study without identity injection; a problem is an ``InputError`` (one line)."""
    section = spec.identity_injection
    if section is None:
        return
    frame = persona_frame(spec, spec_dir)
    if frame is None:  # the spec refuses built-in personas with identity injection; kept for safety
        raise InputError("identity_injection", "personas", "needs personas.source census or file")
    section.steerings(frame, spec_dir, spec.factors.models, seed=0)
