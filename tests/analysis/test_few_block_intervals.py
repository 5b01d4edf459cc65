"""Few-block intervals: with fewer than 20 blocks the consistency summary uses a Student-t interval of the
mean, not a percentile bootstrap (4 blocks: the bootstrap is about 40% too narrow), and says which."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student

from pvsst.analysis.consistency.trials import consistency_by_arm
from pvsst.analysis.stats.block_tests import bootstrap_mean_ci, t_mean_ci


def _summary(values):
    per_trial = pd.DataFrame({"trial_id": [str(i) for i in range(len(values))], "stance_side_agreement": values})
    trials = pd.DataFrame({"trial_id": per_trial["trial_id"], "model": "m", "condition": "c", "topic_id": "t",
                           "seed": range(len(values))})
    return consistency_by_arm(per_trial, trials, metrics=["stance_side_agreement"], draws=2000).iloc[0]


def test_four_blocks_get_the_t_interval():
    values = np.array([0.15, 0.2, 0.22, 0.23])
    row = _summary(values)
    half = student.ppf(0.975, 3) * values.std(ddof=1) / 2
    assert row["interval"] == "t" and row["n_blocks"] == 4
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((values.mean() - half, values.mean() + half), abs=1e-12)
    low, high = bootstrap_mean_ci(values, draws=2000)
    assert (high - low) < 0.7 * (row["ci_high"] - row["ci_low"])  # what the bootstrap gave


def test_twenty_blocks_keep_the_bootstrap_and_one_block_has_no_interval():
    row = _summary(np.linspace(0.1, 0.3, 20))
    assert row["interval"] == "bootstrap" and row["ci_low"] < row["mean"] < row["ci_high"]
    assert np.isnan(t_mean_ci(np.array([0.2]))).all()
