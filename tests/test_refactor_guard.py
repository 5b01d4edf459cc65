"""Issue 12, acceptance 5: the refactor guard.

The run store of ``scripted_smoke.yaml`` must not change under a restructure. The golden checksum was
made by the lead on the code at commit 1398fbd (before issue 12's restructure) with
``pvsst run experiments/specs/scripted_smoke.yaml --out RUN --workers 1`` (inline executor, fresh run
directory) and ``tests/store_checksum.py: store_checksum(RUN)``: sha256 over each trial's agents, posts,
votes, exposures and edges tables as CSV and its metrics.json without timing keys. The restructured
main at the lead's layout commit (5725e9c) gave the same value.
"""
from __future__ import annotations

import pytest

from experiments.run.runner import run_study
from runner_helpers import frozen_copy
from store_checksum import store_checksum

GOLDEN_SCRIPTED_SMOKE = "fa694e73fa56c8e800de79e27e76ca73db9afebc5b826e3a9be79b5c834a856d"


@pytest.mark.slow
def test_scripted_smoke_store_matches_the_pre_restructure_golden(tmp_path):
    spec = frozen_copy(tmp_path)
    summary = run_study(spec, tmp_path / "run", executor="local", workers=1, progress=False)
    assert summary.failed == 0 and summary.done == 32, summary
    assert store_checksum(tmp_path / "run") == GOLDEN_SCRIPTED_SMOKE
