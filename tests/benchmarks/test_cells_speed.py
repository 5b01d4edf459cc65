"""Benchmark: the cell table of 1,000,000 census personas (about 500 cells), its cards and post-stratified
estimates. Prints wall times and the cell table's peak traced memory; asserts correctness, no timings."""
from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from pvsst.analysis.survey.cells.poststratification import population_estimates
from pvsst.personas.cell_cards import cell_cards
from pvsst.personas.cells import cell_table
from pvsst.personas.synthesis import synthesize

ATTRIBUTES = ["age_band", "sex", "party", "region"]       # 15 x 2 x 4 x 4 = 480 possible cells


@pytest.mark.benchmark
def test_cell_table_of_one_million_personas(show):
    start = time.perf_counter()
    people = synthesize(1_000_000, seed=1).personas
    synth_s = time.perf_counter() - start

    start = time.perf_counter()
    table = cell_table(people, ATTRIBUTES)
    cells_s = time.perf_counter() - start
    tracemalloc.start()
    cell_table(people, ATTRIBUTES)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    start = time.perf_counter()
    grouped = people.groupby(ATTRIBUTES + ["state"], observed=True).size()
    groupby_s = time.perf_counter() - start

    start = time.perf_counter()
    cards = cell_cards(table)
    cards_s = time.perf_counter() - start

    rng = np.random.default_rng(0)
    answers = pd.concat([pd.DataFrame({"cell_id": np.repeat(table.cells["cell_id"], 3), "question": f"q{q}",
                                       "option": np.tile(["a", "b", "c"], table.n_cells),
                                       "probability": rng.dirichlet(np.ones(3), table.n_cells).ravel()})
                         for q in range(3)], ignore_index=True)
    start = time.perf_counter()
    estimates = population_estimates(answers, table.counts, table.cells, groups=["party", "region"])
    estimates_s = time.perf_counter() - start

    show(f"\ncells: 1,000,000 personas ({synth_s:.2f} s to synthesise) -> {table.n_cells} cells of "
         f"{' x '.join(ATTRIBUTES)}: cell table {cells_s:.2f} s (pandas groupby size by cell x state alone: "
         f"{groupby_s:.2f} s), peak traced memory {peak / 2**20:.0f} MiB; {table.n_cells} cell cards in "
         f"{cards_s * 1000:.0f} ms; estimates for 3 questions x {estimates['domain'].nunique()} domains in "
         f"{estimates_s:.2f} s")

    assert table.n_cells == people.groupby(ATTRIBUTES, observed=True).ngroups <= 480
    joined = table.counts.merge(table.cells[["cell_id"] + ATTRIBUTES], on="cell_id")
    assert (joined.set_index(ATTRIBUTES + ["state"])["count"].reindex(grouped.index) == grouped).all()
    assert int(table.counts["count"].sum()) == 1_000_000 and len(table.persona_cell) == 1_000_000
    assert cards["card"].is_unique and len(cards) == table.n_cells
    national = estimates[(estimates["level"] == "national")].groupby("question")["estimate"].sum()
    assert np.allclose(national, 1.0) and (estimates["population"][estimates["level"] == "national"] == 1_000_000).all()
