"""The refactor guard: the run store of ``scripted_smoke.yaml`` (the ``pvsst`` preset on the scripted
imitation model) must not change when code is restructured, so a refactor cannot move a result unnoticed.

What is hashed: ``pvsst run experiments/specs/scripted_smoke.yaml --out RUN --workers 1`` (a fresh run
directory) and ``store_checksum.store_checksum(RUN, metrics_keys=GOLDEN_METRIC_KEYS)``: sha256 over each
trial's agents, posts, votes, exposures and edges tables as CSV and its metrics.json (the golden keys only,
timing keys dropped), floats at 12 significant digits.

When it may change: only when a change means to move the ``pvsst`` preset's results (for example new prompt
wording, which the scripted imitation model reads). Then rerun the command above, write the new values
here, and say in the commit message why they changed. A refactor, a new output file or a new metrics key
never changes them.
"""
from __future__ import annotations

import json

import pytest
from runner_helpers import frozen_copy
from store_checksum import store_checksum

from pvsst.experiments.study.runner import run_study

# The checksum with exact floats (``digits=None``), on a machine where numpy/OpenBLAS take AVX2 kernels. On
# an AVX-512 machine 9 trials' final_honest_pairwise_similarity differ in the last bit, so the guard
# compares the rounded checksum below; a store made with OPENBLAS_CORETYPE=Haswell
# NPY_DISABLE_CPU_FEATURES="AVX512_ICL X86_V4" gives this exact value there too.
GOLDEN_SCRIPTED_SMOKE_EXACT = "9f063a49d584e72fc9dff64aaee91496791294e52a6a5e8cc77e5aba8428535e"
# Floats at 12 significant digits: the same on AVX2 and AVX-512 machines.
GOLDEN_SCRIPTED_SMOKE = "72ee07234660fd554c141a40ea48b6d638669b0b7d1ba47b2bc1db7026b553aa"
# The metrics.json keys the checksum covers: the outcomes and accounting of a trial. Keys that only record
# the settings a trial used (protocol preset, overrides, similarity edge cases) are left out, so outputs may
# record more without moving the checksum; these keys are held to their values.
GOLDEN_METRIC_KEYS = frozenset({
    "attacker_impressions", "block_id", "cache_hits", "completion_tokens", "condition", "cost_usd",
    "delta_alignment", "elapsed_seconds", "expected_attacker_impressions", "exposure_audit_pass",
    "final_alignment", "final_honest_pairwise_similarity", "final_pushed_side_share", "honest_parse_error_rate",
    "initial_alignment", "majority_capture", "model", "n_calls", "opposite_side_survival", "parse_error_rate",
    "prompt_tokens", "push_direction", "seed", "topic_id", "toward_push_share", "trial_id",
    "vote_parse_error_rate"})


@pytest.mark.slow
def test_scripted_smoke_store_matches_its_golden_checksum(tmp_path):
    spec = frozen_copy(tmp_path)
    summary = run_study(spec, tmp_path / "run", executor="local", workers=1, progress=False)
    assert summary.failed == 0 and summary.done == 32, summary
    assert store_checksum(tmp_path / "run", metrics_keys=GOLDEN_METRIC_KEYS) == GOLDEN_SCRIPTED_SMOKE
    metrics = json.loads(next((tmp_path / "run" / "trials").glob("*/metrics.json")).read_text())
    assert GOLDEN_METRIC_KEYS <= set(metrics)  # no golden key went missing


def test_the_checksum_sees_a_changed_value_but_not_a_last_bit_difference(tmp_path):
    import pandas as pd
    from store_checksum import TABLES

    def store(name, similarity, shares):
        trial = tmp_path / name / "trials" / "t1"
        trial.mkdir(parents=True)
        for table in TABLES:
            pd.DataFrame({"share": shares}).to_parquet(trial / f"{table}.parquet")
        (trial / "metrics.json").write_text(json.dumps({"similarity": similarity, "elapsed_seconds": len(name)}))
        return tmp_path / name

    avx2 = store("avx2", 0.1169031641809881, [0.1 + 0.2])
    avx512 = store("avx512", 0.11690316418098813, [0.30000000000000004 - 1e-17 + 5e-17])
    changed = store("changed", 0.1169031641, [0.1 + 0.2])
    assert store_checksum(avx2) == store_checksum(avx512)
    assert store_checksum(avx2, digits=None) != store_checksum(avx512, digits=None)
    assert store_checksum(avx2) != store_checksum(changed)
