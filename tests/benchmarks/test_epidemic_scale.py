"""Benchmark: the epidemic model on 100,000 agents for 60 days (``PVSST_BENCH_FULL=1``; 10,000 otherwise).

Printed: the CPU count, the wall time of a run of N agents and of N / 10 agents measured side by side
and their ratio (10 = linear in the agents), the peak traced memory of each (numpy arrays and tables,
by ``tracemalloc``, in a second run: tracing slows a run down) and the process's peak resident memory.
Asserted: the run covers every day and keeps S + E + I + R equal to the population (no timing is
asserted).
"""
from __future__ import annotations

import os
import resource
import time
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from pvsst.sim.epidemic.bank import CASE_LEVELS, ReportingBank
from pvsst.sim.epidemic.model import EpidemicModel
from pvsst.sim.epidemic.settings import EpidemicSettings

FULL = os.environ.get("PVSST_BENCH_FULL") == "1"
N_AGENTS = 100_000 if FULL else 10_000
DAYS = 60
CELLS = [f"c{i}" for i in range(72)]


def _population(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    sizes = rng.choice([1, 2, 3, 4], size=n, p=[0.3, 0.4, 0.2, 0.1])
    household = np.repeat(np.arange(n), sizes)[:n]
    return pd.DataFrame({"cell_id": rng.choice(CELLS, n), "region": rng.choice(["atl", "sf"], n),
                         "household_id": household})


def _bank() -> ReportingBank:
    rng = np.random.default_rng(2)
    table = pd.DataFrame({"cell_id": np.repeat(CELLS, len(CASE_LEVELS)), "case_level": list(CASE_LEVELS) * len(CELLS),
                          "p_yes": rng.uniform(0.1, 0.9, len(CELLS) * len(CASE_LEVELS))})
    return ReportingBank.from_table(table, CELLS)


def _run(people: pd.DataFrame, bank: ReportingBank) -> pd.DataFrame:
    settings = EpidemicSettings(days=DAYS, r0=1.8, initial_infected=max(10, len(people) // 1000))
    model = EpidemicModel(people, bank, settings, seed=3)
    model.run()
    return model.region_days()


def _measure(n: int) -> tuple[float, float, pd.DataFrame]:
    people, bank = _population(n), _bank()
    start = time.perf_counter()
    days = _run(people, bank)
    elapsed = time.perf_counter() - start
    tracemalloc.start()
    _run(people, bank)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return elapsed, peak / 2 ** 20, days


@pytest.mark.benchmark
def test_epidemic_scale(show):
    _measure(1_000)                                          # warm imports and caches
    small_time, small_peak, _ = _measure(N_AGENTS // 10)
    big_time, big_peak, days = _measure(N_AGENTS)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    show(f"\nepidemic: {N_AGENTS:,} agents x {DAYS} days in {big_time:.2f} s ({N_AGENTS * DAYS / big_time:,.0f} "
         f"agent-days/s), peak traced memory {big_peak:.1f} MiB; {N_AGENTS // 10:,} agents in {small_time:.2f} s, "
         f"{small_peak:.1f} MiB; time ratio {big_time / small_time:.1f} (10 = linear); CPUs {os.cpu_count()}; "
         f"process peak RSS {rss:.0f} MiB; infections {int(days['new_infections'].sum()):,}, "
         f"reports {int(days['reports'].sum()):,}")
    assert days["day"].nunique() == DAYS + 1
    assert (days[["susceptible", "exposed", "infectious", "recovered"]].sum(axis=1) == days["population"]).all()
