"""Benchmark: the full 216-row PV-SST confirmatory table (4 contrasts x 6 metrics x 9 strata, 20,000
bootstrap draws, exhaustive / 1,000,000-draw sign-flip tests), batched, vs the literal per-row loop on a
sample of rows. Prints times; asserts the published numbers (counts exact, floats 1e-12), not timings."""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from reference_paths import PUBLISHED_ANALYSIS, PUBLISHED_RESULTS

from pvsst.analysis.stats.block_tests import bootstrap_mean_ci, sign_flip_p
from pvsst.analysis.stats.contrast_table import paired_contrast_table
from pvsst.analysis.stats.plan import PVSST_CONTRASTS, PVSST_METRICS

RESULTS = PUBLISHED_RESULTS
PUBLISHED = PUBLISHED_ANALYSIS


@pytest.mark.benchmark
@pytest.mark.slow
def test_full_pvsst_table_speed(show):
    table, published = pd.read_csv(RESULTS), pd.read_csv(PUBLISHED)
    start = time.perf_counter()
    analysis = paired_contrast_table(table, PVSST_CONTRASTS, PVSST_METRICS)
    batched = time.perf_counter() - start
    frame = analysis.frame
    float_columns = ["mean_difference", "median_difference", "ci95_low", "ci95_high", "sign_test_p",
                     "randomization_p"]
    assert np.abs(frame[float_columns].to_numpy() - published[float_columns].to_numpy()).max() <= 1e-12
    assert (frame[["n_blocks", "positive", "negative", "ties"]].to_numpy()
            == published[["n_blocks", "positive", "negative", "ties"]].to_numpy()).all()
    # Per-row (unbatched) cost on the 24 overall rows, the expensive ones (Monte Carlo when > 20 nonzero).
    overall = [r for r in analysis.results if r.stratum_type == "overall"]
    start = time.perf_counter()
    for r in overall:
        bootstrap_mean_ci(r.differences)
        sign_flip_p(r.differences[r.differences != 0])
    per_row = time.perf_counter() - start
    show(f"\nfull 216-row table, batched: {batched:.2f} s; the 24 overall rows one at a time: {per_row:.2f} s "
          f"(batched table / per-row overall rows = {batched / per_row:.2f})")
