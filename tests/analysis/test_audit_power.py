"""The minimum detectable effect every audit reports: (z_{1-alpha/2} + z_{0.80}) x the bootstrap SD of a share
gap, the largest over groups and options. Two groups answering yes / no at random with p = 1/2: the gap's SD
is sqrt(0.5 / S), so the MDE is 2.80 sqrt(0.5 / S) (0.396 at 25 sets, 0.198 at 100), halving when S
quadruples; and a shift of the reported size is detected about 80% of the time."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from pvsst.analysis.counterfactual.audit import counterfactual_audit


def _answers(sets: int, rng, shift: float = 0.0) -> pd.DataFrame:
    yes_x = rng.random(sets) < 0.5 + shift / 2
    yes_y = rng.random(sets) < 0.5 - shift / 2
    return pd.DataFrame({"set_id": np.repeat(np.arange(sets), 2), "group": ["x", "y"] * sets, "question": "q",
                         "answer": np.where(np.column_stack([yes_x, yes_y]).ravel(), "yes", "no")})


@pytest.mark.parametrize("sets", [25, 100])
def test_the_mde_is_the_wald_shift_at_the_audits_size(sets):
    audit = counterfactual_audit(_answers(sets, np.random.default_rng(sets)), {"q": ["yes", "no"]}, draws=2000,
                                 permutations=99)
    expected = (norm.ppf(0.975) + norm.ppf(0.8)) * np.sqrt(0.5 / sets)
    mde = audit.questions.loc[0, "mde_share_gap"]
    assert mde == pytest.approx(expected, rel=0.2)
    assert audit.shares["share_gap_mde"].max() == mde


def test_a_shift_of_the_reported_mde_is_detected_about_eighty_percent_of_the_time():
    rng = np.random.default_rng(80)
    mde = counterfactual_audit(_answers(100, rng), {"q": ["yes", "no"]}, draws=1000,
                               permutations=99).questions.loc[0, "mde_share_gap"]
    detected = []
    for _ in range(100):  # the share gap's 95% interval excludes 0
        shares = counterfactual_audit(_answers(100, rng, shift=mde), {"q": ["yes", "no"]}, draws=300,
                                      permutations=9).shares
        row = shares[(shares["group"] == "x") & (shares["option"] == "yes")].iloc[0]
        detected.append(row["share_gap_low"] > 0)
    print(f"MDE {mde:.3f} at 100 sets: detected in {np.mean(detected):.2f} of 100 runs")
    assert 0.7 <= np.mean(detected) <= 0.9, np.mean(detected)
