"""Issue 12, acceptance 5: the refactor guard.

The run store of ``scripted_smoke.yaml`` must not change under a restructure. The golden checksum was
made by the lead on the code at commit 1398fbd (before issue 12's restructure) with
``pvsst run experiments/specs/scripted_smoke.yaml --out RUN --workers 1`` (inline executor, fresh run
directory) and ``tests/store_checksum.py: store_checksum(RUN)``: sha256 over each trial's agents, posts,
votes, exposures and edges tables as CSV and its metrics.json without timing keys. The restructured
main at the lead's layout commit (5725e9c) gave the same value. Since then trials record more settings in
metrics.json (protocol, protocol_overrides, similarity_edge_cases: added on main by the protocol work),
so the metrics part of the checksum covers the keys the golden run wrote (GOLDEN_METRIC_KEYS).
"""
from __future__ import annotations

import json

import pytest

from pvsst.experiments.run.runner import run_study
from runner_helpers import frozen_copy
from store_checksum import store_checksum

PRE_RESTRUCTURE_GOLDEN = "fa694e73fa56c8e800de79e27e76ca73db9afebc5b826e3a9be79b5c834a856d"  # 1398fbd, the lead's
# Issue 11 (merged into main at b1d9233) gave pvsst its own prompt wording, which the scripted imitation
# model reads, so posts, votes and outcomes changed on purpose: main at b1d9233 gives the value below
# (measured by running main's code, same command and checksum), and so does this branch's restructure.
GOLDEN_SCRIPTED_SMOKE_EXACT = "9f063a49d584e72fc9dff64aaee91496791294e52a6a5e8cc77e5aba8428535e"
# The exact checksum holds only where numpy/OpenBLAS take the same kernels as the machine that made it: on
# an AVX-512 machine 9 trials' final_honest_pairwise_similarity differ in the last bit. The guard compares
# floats at 12 significant digits (store_checksum's default). The value below was measured on main at
# 098cead by running the smoke study twice on one AVX-512 machine: once as is, once with
# OPENBLAS_CORETYPE=Haswell NPY_DISABLE_CPU_FEATURES="AVX512_ICL X86_V4", whose store gave the exact golden
# above; both stores give this rounded checksum.
GOLDEN_SCRIPTED_SMOKE = "72ee07234660fd554c141a40ea48b6d638669b0b7d1ba47b2bc1db7026b553aa"
# metrics.json keys of a trial at 1398fbd (read from a run of that commit). Keys added since record the
# settings a trial used (protocol preset, overrides, similarity edge cases): the guard holds the old ones
# to their old values (floats at 12 significant digits, as the tables), while outputs may record more.
GOLDEN_METRIC_KEYS = frozenset({
    "attacker_impressions", "block_id", "cache_hits", "completion_tokens", "condition", "cost_usd",
    "delta_alignment", "elapsed_seconds", "expected_attacker_impressions", "exposure_audit_pass",
    "final_alignment", "final_honest_pairwise_similarity", "final_pushed_side_share", "honest_parse_error_rate",
    "initial_alignment", "majority_capture", "model", "n_calls", "opposite_side_survival", "parse_error_rate",
    "prompt_tokens", "push_direction", "seed", "topic_id", "toward_push_share", "trial_id",
    "vote_parse_error_rate"})


@pytest.mark.slow
def test_scripted_smoke_store_matches_the_pre_restructure_golden(tmp_path):
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
