"""Paired-block statistics reproduce PV-SST's published confirmatory table.

Source of the golden numbers: ``pvsst_v1_core_confirmatory_analysis.csv`` (216 rows), the statistics
published by Usman & Williamson, PV-SST (arXiv 2608.20438, repository ranausmanai/synthetic-social-networks
at commit 1ba07d5f), computed from the per-trial table ``pvsst_v1_core_results.csv`` by the procedure in
the README beside them; all three are copied byte for byte in ``tests/data/pvsst_reference/``.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from reference_paths import REFERENCE

from pvsst.analysis.stats.block_tests import bootstrap_mean_ci
from pvsst.analysis.stats.contrast_table import paired_contrast_table
from pvsst.analysis.stats.paired import (
    PUBLISHED_COLUMNS,
    SETTING_COLUMNS,
    IncompleteBlocksWarning,
    paired_block_contrast,
)
from pvsst.analysis.stats.plan import PVSST_CONTRASTS, PVSST_METRICS, Contrast
from pvsst.analysis.stats.preregistered_checks import benjamini_hochberg, consistency_check, mixed_model_contrast
from pvsst.core.errors import InputError
from pvsst.experiments.cli import main

RESULTS = REFERENCE / "pvsst_v1_core_results.csv"
PUBLISHED = REFERENCE / "pvsst_v1_core_confirmatory_analysis.csv"
COUNT_COLUMNS = ["n_blocks", "positive", "negative", "ties"]
FLOAT_COLUMNS = ["mean_difference", "median_difference", "ci95_low", "ci95_high", "sign_test_p",
                 "randomization_p"]
KEY_COLUMNS = ["contrast", "metric", "stratum_type", "stratum"]


@pytest.fixture(scope="module")
def published() -> pd.DataFrame:
    return pd.read_csv(PUBLISHED)


@pytest.fixture(scope="module")
def results_table() -> pd.DataFrame:
    return pd.read_csv(RESULTS)


@pytest.fixture(scope="module")
def analysis(results_table):
    return paired_contrast_table(results_table, PVSST_CONTRASTS, PVSST_METRICS)


def assert_matches_published(ours: pd.DataFrame, published: pd.DataFrame) -> None:
    # the published columns, then the settings each row was computed with
    assert list(ours.columns) == list(published.columns) + list(SETTING_COLUMNS)
    assert list(published.columns) == list(PUBLISHED_COLUMNS)
    assert len(ours) == len(published) == 216
    assert set(ours["bootstrap_draws"]) == {20000} and set(ours["bootstrap_seed"]) == {20260729}
    assert set(ours["alpha"]) == {0.05}
    nonzero = ours["positive"] + ours["negative"]
    expected_method = np.where(nonzero <= 20, "exhaustive", "monte_carlo")
    assert ours["randomization_method"].tolist() == expected_method.tolist()
    assert ours["randomization_draws"].tolist() == np.where(nonzero <= 20, 2 ** nonzero, 1_000_000).tolist()
    for column in KEY_COLUMNS:
        assert ours[column].astype(str).tolist() == published[column].astype(str).tolist(), column
    for column in COUNT_COLUMNS:
        assert ours[column].astype(int).tolist() == published[column].astype(int).tolist(), column
    for column in FLOAT_COLUMNS:
        err = np.abs(ours[column].to_numpy(float) - published[column].to_numpy(float))
        assert err.max() <= 1e-12, (column, int(err.argmax()), float(err.max()))


def test_all_216_published_rows_reproduced_by_the_api(analysis, published):
    assert_matches_published(analysis.frame, published)
    assert len(analysis.excluded_blocks) == 0


def test_cli_reproduces_the_published_csv(tmp_path, published, capsys):
    out = tmp_path / "X.csv"
    assert main(["stats", "paired", str(RESULTS), "--out", str(out)]) == 0
    assert_matches_published(pd.read_csv(out), published)
    printed = capsys.readouterr().out
    assert "216 rows written" in printed
    assert "33/20/11" in printed  # first published row: positive/negative/ties


def test_randomization_methods_follow_the_protocol(analysis):
    for r in analysis.results:
        nonzero = r.positive + r.negative
        if nonzero <= 20:
            assert (r.randomization_method, r.randomization_draws) == ("exhaustive", 2 ** nonzero)
            assert (r.randomization_p * 2 ** nonzero) == pytest.approx(round(r.randomization_p * 2 ** nonzero))
        else:
            assert (r.randomization_method, r.randomization_draws) == ("monte_carlo", 1_000_000)
    # Published headline row: likes - control on similarity, 42 up, 22 down, p = 105 / (10^6 + 1).
    headline = analysis.result("engagement_likes_minus_control", "final_honest_pairwise_similarity")
    assert (headline.positive, headline.negative, headline.randomization_p) == (42, 22, 105 / 1_000_001)


def test_single_contrast_object_matches_its_published_row(results_table, published):
    contrast = Contrast("pdi_distributed_minus_single", "distributed_sources", "single_source")
    result = paired_block_contrast(results_table, contrast, "delta_alignment")
    row = published.iloc[0]
    frame = result.to_frame()
    assert list(frame.columns) == [*PUBLISHED_COLUMNS, *SETTING_COLUMNS]
    assert frame.iloc[0]["n_blocks"] == row["n_blocks"] == 64
    for column in FLOAT_COLUMNS:
        assert abs(frame.iloc[0][column] - row[column]) <= 1e-12
    assert result.conf_int() == (result.ci95_low, result.ci95_high)
    low90, high90 = result.conf_int(alpha=0.10)
    assert row["ci95_low"] < low90 < high90 < row["ci95_high"]
    text = result.summary()
    assert "blocks: 64  (positive 33, negative 20, ties 11)" in text
    assert "monte_carlo, 1000000 patterns" in text


def test_a_result_reports_at_its_own_alpha_unless_asked_for_another(results_table):
    contrast = Contrast("pdi_distributed_minus_single", "distributed_sources", "single_source")
    d = paired_block_contrast(results_table, contrast, "delta_alignment").differences
    batched = paired_contrast_table(results_table, [contrast], ["delta_alignment"], strata=(), alpha=0.2, draws=2000)
    for result in (paired_block_contrast(results_table, contrast, "delta_alignment", alpha=0.2, draws=2000),
                   batched.result(contrast.name, "delta_alignment")):
        own = bootstrap_mean_ci(d, draws=2000, alpha=0.2)
        assert result.alpha == 0.2 and result.conf_int() == (result.ci95_low, result.ci95_high) == own
        wider = result.conf_int(alpha=0.05)
        assert wider == bootstrap_mean_ci(d, draws=2000, alpha=0.05) and wider[0] < own[0] < own[1] < wider[1]
        assert f"80% bootstrap CI [{own[0]:+.6g}, {own[1]:+.6g}] (2000 draws" in result.summary()
        assert f"95% bootstrap CI [{wider[0]:+.6g}, {wider[1]:+.6g}] (2000 draws" in result.summary(alpha=0.05)
        with pytest.raises(ValueError, match="alpha must lie in"):
            result.conf_int(alpha=1.0)


def test_incomplete_blocks_are_excluded_and_reported(results_table, published):
    first_block = results_table.iloc[0][["model", "topic_id", "seed"]]
    drop = ((results_table["model"] == first_block["model"]) & (results_table["topic_id"] == first_block["topic_id"])
            & (results_table["seed"] == first_block["seed"]) & (results_table["condition"] == "control"))
    assert drop.sum() == 1
    table = results_table[~drop]
    with pytest.warns(IncompleteBlocksWarning, match="excluded 1 incomplete block"):
        analysis = paired_contrast_table(table, PVSST_CONTRASTS, ["delta_alignment"])
    excluded = analysis.excluded_blocks
    assert excluded[["contrast", "reason"]].drop_duplicates().values.tolist() == [
        ["engagement_likes_minus_control", "missing arm control"]]
    frame = analysis.frame
    engagement = frame[(frame["contrast"] == "engagement_likes_minus_control") & (frame["stratum"] == "all")]
    assert int(engagement["n_blocks"].iloc[0]) == 63
    untouched = frame[(frame["contrast"] == "pdi_distributed_minus_single") & (frame["stratum"] == "all")]
    assert int(untouched["n_blocks"].iloc[0]) == 64


def test_bad_inputs_raise_input_error(results_table):
    with pytest.raises(InputError, match="unknown arm 'unranked'"):
        paired_contrast_table(results_table, [Contrast("x", "unranked", "likes")], ["delta_alignment"])
    with pytest.raises(InputError, match="nope: missing column"):
        paired_contrast_table(results_table, PVSST_CONTRASTS, ["nope"])
    with pytest.raises(InputError, match="malformed contrast"):
        Contrast.parse("likes-control")
    only_likes = results_table[results_table["condition"] != "control"]
    only_control_once = pd.concat([only_likes, results_table[results_table["condition"] == "control"].head(1)])
    # the single control trial's block has its likes arm: one complete block
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteBlocksWarning)
        analysis = paired_contrast_table(only_control_once, [PVSST_CONTRASTS[1]], ["delta_alignment"])
    assert analysis.frame["n_blocks"].iloc[0] == 1
    no_overlap = results_table[~((results_table["condition"] == "control") & (results_table["seed"] == 101))]
    no_overlap = no_overlap[~((no_overlap["condition"] == "likes") & (no_overlap["seed"] != 101))]
    with pytest.raises(InputError, match="no complete blocks"), warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteBlocksWarning)
        paired_contrast_table(no_overlap, [PVSST_CONTRASTS[1]], ["delta_alignment"])
    duplicated = pd.concat([results_table, results_table.head(1)])
    with pytest.raises(InputError, match="more than one trial"):
        paired_contrast_table(duplicated, PVSST_CONTRASTS, ["delta_alignment"])


def test_consistency_criterion_on_the_published_table(published):
    # likes - control on similarity: positive overall; per the published rows, count positive strata.
    rows = published[(published["contrast"] == "engagement_likes_minus_control")
                     & (published["metric"] == "final_honest_pairwise_similarity")]
    models_up = int((rows.loc[rows["stratum_type"] == "model", "mean_difference"] > 0).sum())
    topics_up = int((rows.loc[rows["stratum_type"] == "topic", "mean_difference"] > 0).sum())
    verdict = consistency_check(published, "engagement_likes_minus_control", "final_honest_pairwise_similarity")
    assert (verdict.models_positive, verdict.n_models) == (models_up, 4)
    assert (verdict.topics_positive, verdict.n_topics) == (topics_up, 4)
    assert verdict.passed == (models_up >= 3 and topics_up >= 3)
    negative = consistency_check(published, "single_minus_organic", "final_honest_pairwise_similarity")
    assert negative.overall_mean < 0 and not negative.passed


def test_benjamini_hochberg_matches_hand_computation():
    p = [0.01, 0.04, 0.03, 0.2]
    # hand: sorted 0.01,0.03,0.04,0.2 -> 0.04, 0.04*4/3... step-up minimum: q = [0.04, 0.0533, 0.0533, 0.2]
    assert benjamini_hochberg(p).tolist() == pytest.approx([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.2], abs=1e-15)


def test_mixed_model_agrees_with_the_paired_mean(results_table, analysis):
    effect = mixed_model_contrast(results_table, "likes", "control", "final_honest_pairwise_similarity")
    paired = analysis.result("engagement_likes_minus_control", "final_honest_pairwise_similarity")
    # Balanced complete blocks: the random-intercept fixed effect equals the mean paired difference.
    assert effect.coefficient == pytest.approx(paired.mean_difference, abs=1e-9)
    assert effect.ci_low < effect.coefficient < effect.ci_high
    assert (effect.n_blocks, effect.n_trials) == (64, 128)
    assert effect.p_value < 0.05
