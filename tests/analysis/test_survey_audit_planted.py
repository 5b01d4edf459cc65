"""A survey run's counterfactual audit detects a planted effect of a set size and not its absence, and
its arity-matched null keeps a six-group spread from reading as disparity.

Each setting is one real run (``pvsst prereg freeze``, ``pvsst survey run --workers 1``, ``pvsst survey
score``) of one GSS item (three options) asked of census matched sets under the profile card, race
(Black, white) x sex (female, male): ``scripted/planted_answer_shift`` raises the share of the first
code (sorted) of the group "Black woman" by exactly 0.15, ``scripted/planted_answer_null`` plants
nothing. The seed replicates are disjoint blocks of the run's matched sets (base personas are
independent draws, so blocks are independent replicates), audited like the run
(:func:`pvsst.analysis.counterfactual.audit.counterfactual_audit`, 100 bootstrap draws, 199
permutations, alpha 0.05, Benjamini-Hochberg).

- Planted, 3,000 matched sets: the run's audit.csv flags the item for the planted model and not for
  the null; the Black-woman share gap's interval covers 0.15. In 10 blocks of 300 sets the shift is
  flagged in at least 9; in 20 blocks of 150 sets of the null model at most 2 are flagged.
- Arity, 6 groups (race Black, white, Hispanic x sex), no effect, 1,200 base personas with the
  arity-matched null: in 20 blocks of 60 sets the max-min spread of group shares exceeds the
  difference between two seed groups (the naive two-run noise floor) in most (at least 14), while the
  arity-null test flags at most 2; the run's audit.csv does not flag the item as exceeding its null.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from audit_helpers import audit_spec, read_analysis, run_and_score

from pvsst.analysis.counterfactual.audit import counterfactual_audit
from pvsst.analysis.counterfactual.measures import share_spread
from pvsst.analysis.survey.audit import member_answers
from pvsst.analysis.survey.units import read_scored_run

pytestmark = pytest.mark.slow

SHIFT, NULL = "scripted/planted_answer_shift", "scripted/planted_answer_null"
CODES = {"natenvir": ["too_little", "about_right", "too_much"]}
FAST = {"draws": 100, "permutations": 199, "alpha": 0.05}


def blocks(answers: pd.DataFrame, n_blocks: int, size: int) -> list[pd.DataFrame]:
    """The answers of ``n_blocks`` disjoint blocks of ``size`` matched sets (in set order)."""
    sets = list(pd.unique(answers["set_id"]))
    assert len(sets) >= n_blocks * size
    return [answers[answers["set_id"].isin(sets[i * size:(i + 1) * size])] for i in range(n_blocks)]


def model_answers(run, model: str) -> pd.DataFrame:
    scored = read_scored_run(run)
    return member_answers(scored.responses[scored.responses["provider"] == model], scored.personas, CODES)


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory):
    directory = tmp_path_factory.mktemp("planted-audit")
    return run_and_score(directory, audit_spec(model=[SHIFT, NULL], sets=3000, arity_null=False), "planted")


def test_the_run_flags_the_planted_shift_and_estimates_it(planted_run):
    questions = read_analysis(planted_run, "audit.csv").set_index("model")
    assert bool(questions.loc[SHIFT, "flagged"]) and not bool(questions.loc[NULL, "flagged"])
    shares = read_analysis(planted_run, "audit_shares.csv").set_index(["model", "group", "option"])
    gap = shares.loc[(SHIFT, "black/female", "about_right")]
    print(f"planted gap {gap['share_gap']:.3f} [{gap['share_gap_low']:.3f}, {gap['share_gap_high']:.3f}]")
    assert gap["share_gap_low"] < 0.15 < gap["share_gap_high"]
    assert abs(shares.loc[(NULL, "black/female", "about_right"), "share_gap"]) < 0.05


def test_planted_shift_detected_in_9_of_10_blocks_and_null_flagged_in_at_most_2_of_20(planted_run):
    planted = [bool(counterfactual_audit(block, CODES, **FAST).questions.iloc[0]["flagged"])
               for block in blocks(model_answers(planted_run, SHIFT), 10, 300)]
    null = [bool(counterfactual_audit(block, CODES, **FAST).questions.iloc[0]["flagged"])
            for block in blocks(model_answers(planted_run, NULL), 20, 150)]
    print(f"planted shift 0.15 flagged in {sum(planted)}/10 blocks of 300 sets; null in {sum(null)}/20 of 150")
    assert sum(planted) >= 9
    assert sum(null) <= 2


def test_six_group_spread_exceeds_two_runs_but_not_the_arity_matched_null(tmp_path):
    vary = {"race_ethnicity": ["black", "white", "hispanic"], "sex": ["female", "male"]}
    run = run_and_score(tmp_path, audit_spec(model=NULL, sets=1200, vary=vary), "arity")
    answers = model_answers(run, NULL)
    observed, floor = answers[answers["audit_role"] == "audit"], answers[answers["audit_role"] == "arity_null"]
    exceeds_two_runs, flagged = 0, 0
    for obs, null in zip(blocks(observed, 20, 60), blocks(floor, 20, 60)):
        wide = null.pivot(index="set_id", columns="group", values="answer")
        two_runs = share_spread(wide[["seed0", "seed1"]].replace({c: i for i, c in enumerate(CODES["natenvir"])})
                                .to_numpy(int), 3)
        row = counterfactual_audit(obs, CODES, null_answers=null, **FAST).questions.iloc[0]
        exceeds_two_runs += row["share_spread"] > two_runs
        flagged += bool(row["exceeds_null"])
    print(
        f"six-group spread > two-seed-group difference in {exceeds_two_runs}/20 blocks; arity null flags {flagged}/20"
    )
    assert exceeds_two_runs >= 14
    assert flagged <= 2
    whole = read_analysis(run, "audit.csv").iloc[0]
    assert whole["n_groups"] == 6 and not bool(whole["exceeds_null"])
    assert np.isfinite(whole["null_share_spread"])
