"""The epidemic runner: frozen ``schedule: epidemic`` spec + its bank run -> one unit per replicate -> the run store.

:func:`run_epidemic` opens the spec once (the lock covers the spec and every file of the bank run it
reads, :func:`~pvsst.experiments.run.frozen.check_frozen`; an unfrozen or changed spec or bank needs a
deviation), builds the reporting bank and the population before anything is written, records the run
in the manifest and hands the replicates to the run kernel (:mod:`pvsst.experiments.run.kernel`)::

    RUN/manifest.json               the spec, its hash, the bank run's file hashes, each replicate's status
    RUN/bank.parquet                the reporting bank: cell_id, case_level, (household,) p_yes
    RUN/population.parquet          the agents: agent, cell_id, state, region (and household columns)
    RUN/replicates/<replicate_id>/  region_days, decisions, DONE

The bank and the population are written once; a resumed run reads them back. A killed run resumes
where it stopped: finished replicates (``DONE``) are skipped, an unfinished one is run again from day 0
with its own seed, so its tables are those of an uninterrupted run. A second run of a finished run does
no work.

Examples
--------
>>> import tempfile
>>> try:
...     run_epidemic("no/such/epidemic.yaml", tempfile.mkdtemp())
... except InputError as err:
...     print(err.field)
spec
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from pvsst.core.atomic import atomic_file
from pvsst.core.errors import InputError
from pvsst.core.run_folder import claimed_run_folder
from pvsst.core.run_layout import BANK, MANIFEST, POPULATION, REPLICATES
from pvsst.experiments.epidemic.bank_source import bank_input_files, bank_input_hashes, open_bank
from pvsst.experiments.epidemic.population import epidemic_population
from pvsst.experiments.epidemic.worker import (
    POPULATION_STREAM,
    EpidemicTask,
    EpidemicWorker,
    master_streams,
    replicate_ids,
    replicate_seeds,
)
from pvsst.experiments.run.frozen import check_frozen
from pvsst.experiments.run.kernel import RunJob, run_units
from pvsst.experiments.run.manifest import RunManifest
from pvsst.experiments.run.summary import RunSummary
from pvsst.experiments.run.worker_gateway import GatewaySettings
from pvsst.experiments.spec.epidemic_study import (
    EpidemicStudySpec,
    canonical_epidemic_spec,
    load_epidemic_spec,
)
from pvsst.sim.epidemic.bank import ReportingBank
from pvsst.sim.epidemic.model import EpidemicModel


@dataclass
class EpidemicRunSummary(RunSummary):
    """The run kernel's summary, counted in replicates."""

    unit: ClassVar[str] = "replicates"


@dataclass(frozen=True)
class EpidemicInput:
    """An epidemic spec opened for a run: the spec, its canonical form and hash, its lock and deviations,
    the bank table and the population (built from the bank run, not yet written)."""

    path: Path
    deviation: str | None
    spec: EpidemicStudySpec
    canonical: dict
    digest: str
    frozen_sha256: str | None
    frozen_at: str | None
    deviations: list[dict]
    bank_hashes: dict
    bank: pd.DataFrame
    population: pd.DataFrame

    @property
    def replicate_ids(self) -> list[str]:
        return replicate_ids(self.spec.replicates)


def epidemic_inputs(spec: EpidemicStudySpec, spec_path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The bank table and the population of a spec, checked as the model will check them (every cell in
    the bank, the seeded agents, the household transmission the households allow); an ``InputError``
    names the spec file and its field. Writes nothing."""
    bank = open_bank(spec, spec_path)
    rng = np.random.default_rng(master_streams(spec.seed)[POPULATION_STREAM])
    try:
        population = epidemic_population(bank.cells, spec.population, rng)
    except InputError as err:
        raise InputError(str(spec_path), f"population.{err.field}", err.problem) from None
    cells = sorted(set(population["cell_id"]))
    missing = sorted(set(cells) - set(bank.table["cell_id"].astype(str)))
    if missing:
        raise InputError(str(spec_path), "bank", f"cell {missing[0]} of the population has no answer in the bank "
                                                 f"({len(missing)} cell(s) without one)")
    try:
        EpidemicModel(population, ReportingBank.from_table(bank.table, cells), spec.epidemic, seed=spec.seed)
    except InputError as err:
        raise InputError(str(spec_path), f"{err.source}.{err.field}", err.problem) from None
    return bank.table, population


def open_epidemic(spec_path: str | Path, deviation: str | None) -> EpidemicInput:
    """Read and check a frozen epidemic spec and its bank run (:func:`epidemic_inputs`)."""
    spec_path = Path(spec_path)
    if not spec_path.is_file():
        raise InputError(str(spec_path), "spec", "no such file")
    spec = load_epidemic_spec(spec_path)
    canonical = canonical_epidemic_spec(spec)
    files = bank_input_files(spec, spec_path)
    hashes = bank_input_hashes(files)
    digest, record, lock = check_frozen(canonical, spec_path, deviation, None, hashes, files)
    bank, population = epidemic_inputs(spec, spec_path)
    return EpidemicInput(spec_path, deviation, spec, canonical, digest, lock.spec_sha256 if lock else None,
                         lock.frozen_at if lock else None, [record] if record else [], hashes, bank, population)


def epidemic_manifest(run_dir: Path, study: EpidemicInput) -> RunManifest:
    """The run's manifest with the epidemic recorded; a run of another spec is refused unless a deviation
    is given, a run of another kind always."""
    manifest = RunManifest.load(run_dir)
    if manifest is not None:
        manifest.require_kind("epidemic")
        if manifest.get("spec_sha256") != study.digest and study.deviation is None:
            raise InputError(run_dir / MANIFEST, "spec_sha256", "this run directory holds a run of a different "
                             "spec; use a new --out, or pass --deviation TEXT to continue it with this spec")
    manifest = manifest or RunManifest.create(run_dir, schedule="epidemic")
    spec = study.spec
    manifest.record(schedule="epidemic", spec_id=spec.id, spec_path=str(study.path), spec_sha256=study.digest,
                    spec=study.canonical, frozen_sha256=study.frozen_sha256, frozen_at=study.frozen_at,
                    bank_run=str(spec.bank_run(study.path.parent).resolve()), bank_sha256=study.bank_hashes,
                    agents=len(study.population))
    manifest.add_deviations(study.deviations)
    manifest.declare(REPLICATES, {rid: {"seed": seed}
                                  for rid, seed in replicate_seeds(spec.seed, spec.replicates).items()})
    return manifest


def _write_once(frame: pd.DataFrame, target: Path) -> pd.DataFrame:
    """Write ``frame`` to ``target`` unless the run holds it already; return what the run holds."""
    if not target.is_file():
        with atomic_file(target) as tmp:
            frame.to_parquet(tmp, index=False)
    return pd.read_parquet(target)


def prepare_epidemic(study: EpidemicInput, run_dir: Path, job: RunJob):
    """The job's ``prepare``: write the bank and the population once; return the payload builder (one
    task per pending replicate)."""
    bank = _write_once(study.bank, run_dir / BANK)
    population = _write_once(study.population, run_dir / POPULATION)
    seeds = replicate_seeds(study.spec.seed, study.spec.replicates)
    settings = study.spec.epidemic.model_dump(mode="json")

    def payloads(pending, summary, each, gateway):
        for replicate_id in pending:
            yield EpidemicTask((replicate_id,), seeds, settings, population, bank)

    return payloads


def epidemic_job(study: EpidemicInput, run_dir: Path, *, workers: int | None, progress: bool) -> RunJob:
    """The kernel's job for the spec's replicates (no model call: no cache, no budget)."""
    manifest = epidemic_manifest(run_dir, study)
    n_workers = workers or 1
    return RunJob(run_dir=run_dir, manifest=manifest, section=REPLICATES, what=f"epidemic {study.spec.id}",
                  label=study.spec.id, unit_ids=study.replicate_ids, worker=EpidemicWorker(),
                  prepare=functools.partial(prepare_epidemic, study, run_dir), gateway=GatewaySettings(cache_path=None),
                  summary=EpidemicRunSummary(total=len(study.replicate_ids)), command=["run", study.path],
                  deviation=study.deviation, threshold=1.0, workers=n_workers, progress=progress,
                  session={"executor": "local", "workers": n_workers})


def run_epidemic(spec_path: str | Path, run_dir: str | Path, *, deviation: str | None = None,
                 workers: int | None = None, progress: bool = True) -> EpidemicRunSummary:
    """Run (or resume) every replicate of a frozen epidemic spec into ``run_dir``; see the module docstring.

    Parameters
    ----------
    spec_path : the epidemic spec, frozen with ``pvsst prereg freeze`` (or given a ``deviation``).
    run_dir : new, empty, or a run of this spec (resumed).
    deviation : run a changed or unfrozen spec (or a changed bank); the text is recorded in the manifest.
    workers : replicates in parallel (default 1: in this process).
    progress : show the progress bar.

    Returns
    -------
    EpidemicRunSummary
        The tally of the run; its ``exit_code`` is the command's.
    """
    if workers is not None and workers < 1:
        raise InputError("--workers", "workers", f"must be at least 1 (got {workers})")
    study = open_epidemic(spec_path, deviation)
    with claimed_run_folder(run_dir):
        return run_units(epidemic_job(study, Path(run_dir), workers=workers, progress=progress))
