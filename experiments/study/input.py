"""Open a study spec for a run, once: the spec, its lock, its materials' hashes, the deviation and the design.

:func:`open_study` reads the spec and its lock once, checks them (and the materials' hashes) with
:func:`~pvsst.experiments.run.frozen.check_frozen`, applies command-line gateway overrides to the
spec's ``execution`` section (validated by the one gateway configuration model, recorded as a
deviation) and plans the trials (:func:`~pvsst.experiments.spec.design.expand`).

Examples
--------
>>> study = open_study("experiments/specs/quickstart.yaml", None, {"max_concurrency": 2})
>>> study.execution.max_concurrency, study.deviations[0]["changed_fields"], len(study.design.trials)
(2, ['execution.max_concurrency: 1 -> 2'], 4)
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from pvsst.core.errors import InputError
from pvsst.experiments.run.frozen import check_frozen, override_record
from pvsst.experiments.spec.design import Design, expand
from pvsst.experiments.spec.execution import Execution
from pvsst.experiments.spec.materials import spec_input_files, spec_materials_dir, spec_materials_hashes
from pvsst.experiments.spec.study import StudySpec, canonical_spec, load_spec
from pvsst.experiments.study.files import check_study_files
from pvsst.experiments.study.injection import check_study_injection


@dataclass(frozen=True)
class StudyInput:
    """A study spec opened for a run: the spec, its canonical form and hash, its lock and deviations,
    its materials directory and the effective ``execution`` (command-line overrides applied)."""

    path: Path
    deviation: str | None             # the --deviation text given
    overrides: dict                   # gateway field -> value given on the command line
    spec: StudySpec
    canonical: dict
    digest: str
    frozen_sha256: str | None
    frozen_at: str | None
    deviations: list[dict]
    materials_dir: Path
    execution: Execution
    design: Design


def open_study(spec_path: str | Path, deviation: str | None, overrides: dict | None = None,
               trial_ids: Collection[str] | None = None) -> StudyInput:
    """Read, check and plan a frozen spec (each file read once); apply the gateway ``overrides``; plan
    only ``trial_ids`` when given (``pvsst simulate``'s one trial)."""
    spec_path = Path(spec_path)
    spec = load_spec(spec_path)
    canonical = canonical_spec(spec)
    materials_dir = spec_materials_dir(spec, spec_path.parent)
    hashes = spec_materials_hashes(spec, materials_dir, spec_path.parent)
    execution = spec.execution.with_options("command line", **(overrides or {}))
    digest, record, lock = check_frozen(canonical, spec_path, deviation, materials_dir, hashes,
                                        spec_input_files(spec, spec_path.parent))
    if record is not None:  # not as frozen: check what a freeze would have checked, before anything is written
        check_study_files(spec, spec_path.parent)
    else:  # the vectors must still fit the model files installed here
        check_study_injection(spec, spec_path.parent)
    override = override_record(overrides or {}, spec.execution.model_dump(mode="json"),
                               execution.model_dump(mode="json"), digest, digest, "execution")
    return StudyInput(spec_path, deviation, {k: v for k, v in (overrides or {}).items() if v is not None},
                      spec, canonical, digest, lock.spec_sha256 if lock else None,
                      lock.frozen_at if lock else None, [r for r in (record, override) if r is not None],
                      materials_dir, execution, _planned(expand(spec), trial_ids))


def _planned(design: Design, trial_ids: Collection[str] | None) -> Design:
    if trial_ids is None:
        return design
    trials = tuple(plan for plan in design.trials if plan.trial_id in trial_ids)
    missing = sorted(set(trial_ids) - {plan.trial_id for plan in trials})
    if missing:
        raise InputError("trials", missing[0], "no such trial in the spec's design")
    kept = {plan.trial_id for plan in trials}
    return Design(trials, {b: tuple(t for t in ids if t in kept) for b, ids in design.blocks.items()
                           if any(t in kept for t in ids)})
