"""Benchmark: 1,000,000 raked persona records (target: seconds). Prints, asserts no timing."""
from __future__ import annotations

import time

import numpy as np
import pytest

from pvsst.personas.synthesis import synthesize


@pytest.mark.benchmark
def test_one_million_personas_speed(show):
    synthesize(1_000, seed=0)                 # warm the cached seed, survey and census loads
    start = time.perf_counter()
    result = synthesize(1_000_000, seed=1)
    elapsed = time.perf_counter() - start
    small_start = time.perf_counter()
    synthesize(100_000, seed=1)
    small_elapsed = time.perf_counter() - small_start
    show(f"\npersonas: 1,000,000 records in {elapsed:.2f} s = {1e6 / elapsed:,.0f} records/s; "
          f"100,000 in {small_elapsed:.2f} s; ratio 1M/100k time = {elapsed / small_elapsed:.1f} "
          f"(10 = linear); max abs error {result.max_abs_error_pp:.4f} pp")
    assert len(result.personas) == 1_000_000 and result.personas["persona_id"].is_unique
    assert result.max_abs_error_pp <= 0.5
    assert np.isfinite(elapsed)
