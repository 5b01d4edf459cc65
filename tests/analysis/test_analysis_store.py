"""Run-store loading (only DONE trials), per-trial tables, and the analysis modules' docstring examples."""
from __future__ import annotations

import doctest
import importlib

import pandas as pd
import pytest
from analysis_synthetic_run import write_run

from pvsst.analysis.store.reader import load_run, load_trial_table
from pvsst.core.errors import InputError

ANALYSIS_MODULES = ("stats.block_tests", "stats.paired", "stats.contrast_table", "stats.preregistered_checks",
                    "text.lexical", "text.diversity", "study.outcomes", "store.reader", "network.homophily",
                    "network.dynamics", "stats.plan")


def test_load_run_reads_only_completed_trials(tmp_path):
    run = write_run(tmp_path / "run", conditions=("likes", "control"), skip=("m1-t1-101-likes",),
                    with_edges=True)
    data = load_run(run)
    assert len(data.trials) == 15 and "m1-t1-101-likes" not in set(data.trials["trial_id"])
    assert set(data.posts["trial_id"]) == set(data.trials["trial_id"])
    assert {"agents", "posts", "votes", "exposures", "edges"} <= {
        name for name in ("agents", "posts", "votes", "exposures", "edges", "llm_calls")
        if not getattr(data, name).empty}
    assert data.llm_calls.empty
    one = data.trial("m1-t1-101-control")
    assert set(one["posts"]["trial_id"]) == {"m1-t1-101-control"} and len(one["agents"]) == 6
    assert data.manifest["spec_sha256"] == "0" * 64


def test_load_run_errors(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_run(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="manifest.json: missing"):
        load_run(tmp_path / "empty")
    run = write_run(tmp_path / "run", conditions=("likes",))
    (run / "trials" / "m1-t1-101-likes" / "metrics.json").unlink()
    with pytest.raises(InputError, match="metrics.json: missing in a completed"):
        load_run(run)


def test_load_trial_table_csv_parquet_and_missing_columns(tmp_path):
    frame = pd.DataFrame({"model": ["m"], "condition": ["likes"], "y": [1.5]})
    frame.to_parquet(tmp_path / "t.parquet")
    frame.to_csv(tmp_path / "t.csv", index=False)
    for name in ("t.parquet", "t.csv"):
        pd.testing.assert_frame_equal(load_trial_table(tmp_path / name, required=("y",)), frame)
    with pytest.raises(InputError, match=r"t.csv: seed: missing column \(also missing: topic_id\)"):
        load_trial_table(tmp_path / "t.csv", required=("model", "seed", "topic_id"))


@pytest.mark.parametrize("name", ANALYSIS_MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(f"pvsst.analysis.{name}"))
    assert result.failed == 0 and result.attempted > 0
