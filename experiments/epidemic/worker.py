"""The epidemic job's worker: one replicate of the epidemic model, its tables returned, nothing written.

Each replicate runs :class:`~pvsst.sim.epidemic.model.EpidemicModel` on the run's population and bank
with its own seed (spawned from the master seed, :func:`replicate_seeds`) and returns its region-day
and decision tables; the run kernel writes them to ``RUN/replicates/<replicate_id>/``.

Examples
--------
>>> replicate_ids(3)
['replicate-000', 'replicate-001', 'replicate-002']
>>> seeds = replicate_seeds(7, 2)
>>> seeds == replicate_seeds(7, 2), len(set(seeds.values()))
(True, 2)
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pvsst.experiments.run.kernel import UnitResult, lost_units
from pvsst.sim.epidemic.bank import ReportingBank
from pvsst.sim.epidemic.model import EpidemicModel
from pvsst.sim.epidemic.settings import EpidemicSettings

POPULATION_STREAM, REPLICATE_STREAM = range(2)


def replicate_ids(n: int) -> list[str]:
    """The unit ids of ``n`` replicates."""
    return [f"replicate-{i:03d}" for i in range(n)]


def master_streams(seed: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    """The master seed's two children: the population's draws (households), the replicates' seeds."""
    population, replicates = np.random.SeedSequence(int(seed)).spawn(2)
    return population, replicates


def replicate_seeds(seed: int, n: int) -> dict[str, int]:
    """Each replicate's seed (a 63-bit integer spawned from the master seed), by replicate id."""
    children = master_streams(seed)[REPLICATE_STREAM].spawn(n)
    return {rid: int(child.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
            for rid, child in zip(replicate_ids(n), children)}


@dataclass(frozen=True)
class EpidemicTask:
    """The replicates one payload runs, with everything they read (plain data: it pickles into workers)."""

    replicate_ids: tuple[str, ...]
    seeds: dict
    settings: dict
    population: pd.DataFrame
    bank: pd.DataFrame


class EpidemicWorker:
    """Runs the replicates of an :class:`EpidemicTask` (the kernel's
    :class:`~pvsst.experiments.run.kernel.UnitWorker`)."""

    def run(self, task: EpidemicTask) -> list[UnitResult]:
        settings = EpidemicSettings(**task.settings)
        cells = sorted(task.population["cell_id"].astype(str).unique())
        bank = ReportingBank.from_table(task.bank, cells)
        results = []
        for replicate_id in task.replicate_ids:
            started = time.perf_counter()
            model = EpidemicModel(task.population, bank, settings, task.seeds[replicate_id])
            model.run()
            results.append(UnitResult(replicate_id, "done", elapsed_s=time.perf_counter() - started,
                                      tables={"region_days": model.region_days(), "decisions": model.decisions()},
                                      record={"seed": task.seeds[replicate_id]}))
        return results

    def lost(self, task: EpidemicTask, error: BaseException) -> list[UnitResult]:
        return lost_units(task.replicate_ids, error)
