"""`pvsst run` reads the spec file once and its lock once; verification works on
the loaded spec and lock, and workers rebuild the spec from its canonical form once, not per trial (what
was verified is what runs, and a file edited mid-run cannot change it)."""
from __future__ import annotations

import collections
import pathlib

from runner_helpers import small_smoke_spec

import pvsst.experiments.study.blocks as blocks
from pvsst.experiments.study.runner import run_study


def test_run_study_reads_the_spec_and_the_lock_once(tmp_path, monkeypatch):
    spec = small_smoke_spec(tmp_path / "spec", "[101, 211]")
    lock = spec.with_name(spec.name + ".lock.json")
    reads: collections.Counter = collections.Counter()
    real_read_text = pathlib.Path.read_text

    def counting_read_text(self, *args, **kwargs):
        reads[pathlib.Path(self).resolve()] += 1
        return real_read_text(self, *args, **kwargs)

    rebuilds = []
    real_rebuild = blocks.spec_from_canonical
    monkeypatch.setattr(pathlib.Path, "read_text", counting_read_text)
    monkeypatch.setattr(blocks, "spec_from_canonical", lambda data: rebuilds.append(1) or real_rebuild(data))

    summary = run_study(spec, tmp_path / "run", executor="local", workers=1, progress=False)
    assert summary.done == 16 and summary.failed == 0
    assert reads[spec.resolve()] == 1
    assert reads[lock.resolve()] == 1
    assert len(rebuilds) == 1  # 16 trials run in this process from one rebuilt spec
