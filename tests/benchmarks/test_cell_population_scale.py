"""Benchmark: 1,000,000 census personas answered cell by cell by the embedded model (``logprobs``).

The shipped instrument ``experiments/surveys/cces2016_vote.yaml`` (three CCES 2016 questions, cells of
sex x race / ethnicity x college degree x party, at most 80) is run with ``pvsst survey run`` as it is
frozen. Asserted: the embedded model is called exactly once per distinct cell x question, none of them
cached; a second run on a copy of the response cache makes no model call (every call a cache hit).
Printed: the CPU count, the wall time of the population part alone (census draw, cell table, cell
cards), of the whole run and of the cached rerun, the process's peak resident memory, and the cost per
persona against a small per-persona run of the same instrument (the same questions and model, 20
census personas each asked with their own profile card), measured side by side.

The full run takes many minutes on 2 cores (hundreds of embedded calls), so it runs with
``PVSST_BENCH_FULL=1`` (``make bench``) only.
"""
from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pvsst.experiments.cli import main
from pvsst.experiments.prereg.freeze import freeze
from pvsst.experiments.survey.personas import asked_tables, human_table
from pvsst.experiments.survey.spec import load_survey

INSTRUMENT = Path(__file__).resolve().parents[2] / "experiments" / "surveys" / "cces2016_vote.yaml"
FULL = os.environ.get("PVSST_BENCH_FULL") == "1"
PER_PERSONA_N = 20

pytestmark = [pytest.mark.slow, pytest.mark.embedded, pytest.mark.benchmark,
              pytest.mark.skipif(not FULL, reason="hundreds of embedded calls: PVSST_BENCH_FULL=1 (make bench)")]


def _model_calls(run: Path, model: str) -> pd.DataFrame:
    calls = pd.concat([pd.read_parquet(p) for p in sorted(run.glob("units/*/llm_calls.parquet"))], ignore_index=True)
    return calls[calls["model"] == model]


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def test_one_million_personas_answered_cell_by_cell(tmp_path, show):
    spec = load_survey(INSTRUMENT)
    questions = len(spec.questions)

    start = time.perf_counter()
    human = human_table(spec)
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    cells, counts = asked_tables(spec, human)
    population_s = time.perf_counter() - start
    population_peak = _peak_mib()
    n_cells = len(cells)
    assert int(counts["population"].sum()) == spec.personas.n == 1_000_000 and n_cells <= 500
    del cells, counts, human

    run = tmp_path / "cells"
    start = time.perf_counter()
    assert main(["survey", "run", str(INSTRUMENT), "--out", str(run), "--workers", "1"]) == 0
    run_s = time.perf_counter() - start
    run_peak = _peak_mib()
    calls = _model_calls(run, spec.model)
    assert len(calls) == n_cells * questions and not calls["cached"].any() and (calls["status"] == "ok").all()
    stored = pd.read_parquet(run / "cells.parquet")
    assert stored["cell_id"].nunique() == n_cells and int(stored["population"].sum()) == 1_000_000

    again = tmp_path / "again"
    again.mkdir()
    for part in run.glob("cache.sqlite*"):  # the database and its write-ahead log
        (again / part.name).write_bytes(part.read_bytes())
    start = time.perf_counter()
    assert main(["survey", "run", str(INSTRUMENT), "--out", str(again), "--workers", "1"]) == 0
    rerun_s = time.perf_counter() - start
    cached = _model_calls(again, spec.model)
    assert len(cached) == len(calls) and cached["cached"].all()

    data = yaml.safe_load(INSTRUMENT.read_text())
    del data["cells"]
    data["personas"]["n"] = PER_PERSONA_N
    data["execution"]["chunk_size"] = PER_PERSONA_N
    per_persona_spec = tmp_path / "per_persona.yaml"
    per_persona_spec.write_text(yaml.safe_dump(data, sort_keys=False))
    freeze(per_persona_spec)
    per_persona = tmp_path / "per-persona"
    start = time.perf_counter()
    assert main(["survey", "run", str(per_persona_spec), "--out", str(per_persona), "--workers", "1"]) == 0
    per_persona_s = time.perf_counter() - start
    per_persona_calls = _model_calls(per_persona, spec.model)
    assert len(per_persona_calls) == PER_PERSONA_N * questions

    cell_cost = run_s / 1_000_000
    persona_cost = per_persona_s / PER_PERSONA_N
    show(f"\ncell population: {os.cpu_count()} CPUs; 1,000,000 census personas -> {n_cells} cells of "
         f"{' x '.join(spec.cells.attributes)}; {questions} questions, {spec.model}, logprobs\n"
         f"  population part alone (census draw, cell table, cards, donors): {population_s:.1f} s "
         f"(real answers read in {read_s:.1f} s), peak RSS so far {population_peak:.0f} MiB\n"
         f"  cell run: {run_s:.1f} s wall ({run_s / 60:.1f} min), {len(calls)} model calls "
         f"(= {n_cells} cells x {questions}), {run_s / len(calls):.2f} s per call; peak RSS {run_peak:.0f} MiB\n"
         f"  second run on the same cache: {rerun_s:.1f} s, {int(cached['cached'].sum())} cache hits, 0 model calls\n"
         f"  per-persona run ({PER_PERSONA_N} personas, profile cards): {per_persona_s:.1f} s, "
         f"{len(per_persona_calls)} calls, {persona_cost:.2f} s per persona "
         f"(1,000,000 personas at that rate: {persona_cost * 1_000_000 / 86400:.1f} days)\n"
         f"  cost per persona: cell run {cell_cost * 1e6:.1f} us vs per-persona {persona_cost * 1e6:.0f} us: "
         f"ratio {persona_cost / cell_cost:,.0f}x")
