"""A survey audit under logprobs / verbalized elicitation measures and tests whole distributions, not modal answers.

Distributions are built directly (no model run): per matched set a base distribution ``b_s ~ Dirichlet(c_b m)``
and per member ``p_sg ~ Dirichlet(c_m b_s)``; a planted shift raises one group's probability of one option
by ``delta`` in every set, the mass taken from its other options in proportion.

- Planted 0.15 (150 sets of 2 groups, the top option flipping in most sets): flagged, and the flip rate is
  the expected flip rate of the distributions (its closed form, about 0.58) where the modal answers flip in
  about 89% of sets; the group's expected share gap estimates 0.15.
- Null calibration: 400 null audits (100 sets of 4 groups, 199 permutations) reject at alpha 0.05 in 3-7%.
- The MDE is honest: a shift equal to an audit's reported MDE (200 sets of 4 groups) is detected in 70-90%
  of 200 simulated audits.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pvsst.analysis.counterfactual.audit import counterfactual_audit
from pvsst.analysis.counterfactual.distribution_power import hardest_probability_shift
from pvsst.analysis.counterfactual.distributions import distribution_permutation_p
from pvsst.analysis.report.survey.audit import power_lines
from pvsst.analysis.survey.audit import audit_responses

MEAN = np.array([0.45, 0.35, 0.2])
FAST = {"draws": 200, "seed": 7, "permutations": 199, "alpha": 0.05}


def _dirichlet(rng: np.random.Generator, concentration: np.ndarray) -> np.ndarray:
    draws = rng.gamma(concentration)
    return draws / draws.sum(axis=-1, keepdims=True)


def simulated_cube(rng: np.random.Generator, sets: int, groups: int, *, mean: np.ndarray = MEAN, shift: float = 0.0,
                   option: int = 0, base_concentration: float = 10.0, member_concentration: float = 30.0) -> np.ndarray:
    """(sets, groups, K) member distributions; group 0 shifted by ``shift`` on ``option``."""
    base = _dirichlet(rng, np.broadcast_to(base_concentration * mean, (sets, len(mean))))
    cube = _dirichlet(rng, np.broadcast_to(member_concentration * base[:, None, :], (sets, groups, len(mean))))
    if shift:
        shifted = cube[:, 0].copy()
        raised = np.minimum(shifted[:, option] + shift, 1.0)
        shifted *= ((1.0 - raised) / (1.0 - shifted[:, option]))[:, None]
        shifted[:, option] = raised
        cube[:, 0] = shifted
    return cube


def test_a_planted_shift_is_flagged_and_its_flip_rate_is_the_distributions_not_the_modal_answers():
    codes = ["y", "n", "dk"]
    cube = simulated_cube(np.random.default_rng(2), 150, 2, mean=np.array([0.5, 0.42, 0.08]), shift=0.15, option=1,
                          base_concentration=200.0, member_concentration=400.0)
    groups = ["female", "male"]
    personas = pd.DataFrame([{"persona_id": f"{s}-{g}", "set_id": f"s{s}", "group": g, "audit_role": "audit"}
                             for s in range(len(cube)) for g in groups])
    responses = pd.DataFrame([{"provider": "m", "condition": "c", "elicitation": "logprobs", "question": "q",
                               "persona_id": f"{s}-{g}", "parse_ok": True, "answer": codes[int(cube[s, gi].argmax())],
                               "probabilities": json.dumps(dict(zip(codes, cube[s, gi].tolist())))}
                              for s in range(len(cube)) for gi, g in enumerate(groups)])
    questions, shares, _ = audit_responses(responses, personas, {"q": codes}, **FAST)
    row = questions.iloc[0]
    expected = float((1.0 - (cube[:, 0] * cube[:, 1]).sum(axis=1)).mean())
    modal = float((cube[:, 0].argmax(axis=1) != cube[:, 1].argmax(axis=1)).mean())
    print(f"flip rate {row['flip_rate']:.3f} (closed form {expected:.3f}; modal answers {modal:.3f}), "
          f"member TV {row['member_tv']:.3f}, omnibus p {row['omnibus_p']:.3f}, MDE {row['mde']:.3f}")
    assert row["omnibus_statistic"] == "distributions" and bool(row["flagged"]) and row["omnibus_p"] == 0.005
    assert row["flip_rate"] == pytest.approx(expected, rel=1e-9) and row["flip_rate"] < 0.6
    assert modal > 0.85  # what the modal answers would read
    assert row["flip_rate_low"] <= row["flip_rate"] <= row["flip_rate_high"]
    assert 0.15 < row["member_tv"] < 0.2 and row["share_spread"] == pytest.approx(0.15, abs=0.02)
    gap = shares.set_index(["group", "option"]).loc[("female", "n")]
    assert gap["share_gap_low"] < 0.15 < gap["share_gap_high"] and gap["share_gap"] == pytest.approx(0.15, abs=0.01)
    assert row["mde_unit"] == "probability" and row["mde_tests"] == 1 and 0 < row["mde"] < 0.05
    assert "note" not in row or not isinstance(row["note"], str) or row["note"] == ""
    assert power_lines(questions)[0] == (f"- m | c, q: flagged; at this size the audit detects shifts of at least "
                                         f"{row['mde']:.3f} in one group's mean probability of an option with 80% "
                                         "power.")


def test_null_audits_reject_at_their_level():
    rng = np.random.default_rng(3)
    p = np.array([distribution_permutation_p(simulated_cube(rng, 100, 4), permutations=199, seed=i)
                  for i in range(400)])
    rate = float((p <= 0.05).mean())
    print(f"null audits flagged at alpha 0.05: {rate:.3f} of 400")
    assert 0.03 <= rate <= 0.07


def test_a_shift_of_the_reported_mde_is_detected_in_about_80_percent_of_audits():
    rng = np.random.default_rng(4)
    rows = [{"set_id": s, "group": f"g{g}", "question": "q", "probabilities": tuple(vector)}
            for s, members in enumerate(simulated_cube(rng, 200, 4)) for g, vector in enumerate(members)]
    row = counterfactual_audit(pd.DataFrame(rows), {"q": ["a", "b", "c"]}, draws=50, permutations=199,
                               seed=1).questions.iloc[0]
    power = json.loads(row["power_distribution"])
    mde, option = hardest_probability_shift(200, n_groups=4, base=power["base"],
                                            covariance=np.array(power["covariance"]))
    assert row["mde"] == pytest.approx(mde) and row["mde_unit"] == "probability" and row["mde_tests"] == 1
    p = np.array([distribution_permutation_p(simulated_cube(rng, 200, 4, shift=mde, option=option),
                                             permutations=199, seed=i) for i in range(200)])
    rate = float((p <= 0.05).mean())
    print(f"MDE {mde:.4f} (option {option}): detected in {rate:.3f} of 200 audits")
    assert 0.70 <= rate <= 0.90
