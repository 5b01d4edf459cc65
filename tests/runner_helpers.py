"""Helpers for runner tests: a frozen copy of a shipped spec, a shared reference run, run-store comparison."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
from session_folder import session_folder

from pvsst.experiments.prereg.freeze import freeze

SPECS = Path(__file__).resolve().parents[1] / "experiments" / "specs"
COMPARED_TABLES = ("agents", "posts", "votes", "exposures", "edges")
# metrics.json fields that describe the run, not the trial's result
RUN_ACCOUNTING = ("cache_hits", "elapsed_seconds")


def frozen_copy(tmp_path: Path, name: str = "scripted_smoke.yaml", edit: tuple[str, str] | None = None,
                freeze_it: bool = True) -> Path:
    spec = tmp_path / name
    shutil.copy(SPECS / name, spec)
    if freeze_it:
        freeze(spec)
    if edit is not None:
        text = spec.read_text()
        assert edit[0] in text, edit
        spec.write_text(text.replace(edit[0], edit[1], 1))
    return spec


def pool_reference_run(tmp_path_factory) -> Path:
    """The 32-trial ``scripted_smoke`` run made by ``pvsst run --workers 2`` (the local process pool) in
    a process of its own: once per pytest session, shared by its xdist workers (a file lock; the tests
    that compare against it, crash-resume and the Ray cluster, only read it)."""
    from filelock import FileLock

    shared = session_folder(tmp_path_factory)
    out, done = shared / "pool-reference-run", shared / "pool-reference-run.done"
    with FileLock(str(shared / "pool-reference-run.lock")):
        if not done.is_file():
            shutil.rmtree(out, ignore_errors=True)  # a reference an earlier test left unfinished
            (shared / "pool-reference-spec").mkdir(exist_ok=True)
            spec = frozen_copy(shared / "pool-reference-spec")
            subprocess.run([sys.executable, "-m", "pvsst.experiments.cli", "run", str(spec), "--out", str(out),
                            "--workers", "2"], check=True, capture_output=True, timeout=600)
            done.write_text("ok")
    return out


def small_smoke_spec(folder: Path, seeds: str, extra: str = "", *, topics: str | None = None,
                     trial: str | None = "{n_agents: 4, n_rounds: 2}") -> Path:
    """``scripted_smoke`` cut down and frozen in ``folder``: the given ``seeds`` list (``"[101]"`` or
    ``"[101, 211]"``), optionally the given ``topics`` list, the ``trial`` section (4 agents x 2 rounds unless
    told; None keeps the shipped one) and the ``extra`` lines of YAML before the execution section."""
    folder.mkdir()
    text = (SPECS / "scripted_smoke.yaml").read_text()
    assert ("seeds: [101, 211, 307, 419]" in text
            and "by_seed: {101: support, 211: oppose, 307: support, 419: oppose}" in text)
    text = text.replace("seeds: [101, 211, 307, 419]", f"seeds: {seeds}")
    by_seed = {"[101]": "{101: support}", "[101, 211]": "{101: support, 211: oppose}"}[seeds]
    text = text.replace("by_seed: {101: support, 211: oppose, 307: support, 419: oppose}", f"by_seed: {by_seed}")
    if topics is not None:
        assert "topics: [ai_labels, identity_verification]" in text
        text = text.replace("topics: [ai_labels, identity_verification]", f"topics: {topics}", 1)
    sections = (f"trial: {trial}\n" if trial is not None else "") + extra
    text = text.replace("\nexecution:\n", f"\n{sections}\nexecution:\n")
    spec = folder / "scripted_smoke.yaml"
    spec.write_text(text)
    freeze(spec)
    return spec


def study_with_own_files(folder: Path) -> Path:
    """small_smoke_spec (seed 101: 2 topics x 4 arms = 8 trials) with a materials directory of its own (reworded)
    and an edge list, both beside the spec in ``folder``; frozen."""
    from pvsst.experiments.cli import main

    spec = small_smoke_spec(folder, "[101]")
    assert main(["protocol", "new", str(folder / "my_materials")]) == 0
    post_system = folder / "my_materials" / "post_system.txt"
    post_system.write_text("Study-file wording. " + post_system.read_text())
    (folder / "edges.txt").write_text("a00 a01\na01 a02\na02 a03\na03 a00\n")
    text = spec.read_text()
    assert "trial: {n_agents: 4, n_rounds: 2}\n" in text
    spec.write_text(text.replace("trial: {n_agents: 4, n_rounds: 2}\n", "trial: {n_agents: 4, n_rounds: 2, network: "
                                 "{kind: edgelist, path: edges.txt}}\nprotocol: {materials: my_materials}\n"))
    assert main(["prereg", "freeze", "--force", str(spec)]) == 0
    return spec


def trial_dirs(run: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted((run / "trials").iterdir()) if (p / "DONE").is_file()}


def metrics(trial: Path) -> dict:
    data = json.loads((trial / "metrics.json").read_text())
    return {k: v for k, v in data.items() if k not in RUN_ACCOUNTING}


def assert_same_run_store(a: Path, b: Path, *, part_of_a: bool = False) -> None:
    """Same trials, byte-identical event tables, identical outcome metrics. With ``part_of_a``, ``b`` may
    hold only some of ``a``'s trials (a study cut to fewer seeds: a trial's bytes do not depend on the
    other trials of its study) and those are compared."""
    ta, tb = trial_dirs(a), trial_dirs(b)
    if part_of_a:
        assert tb and set(tb) <= set(ta), sorted(set(tb) - set(ta))
        ta = {trial_id: ta[trial_id] for trial_id in tb}
    assert sorted(ta) == sorted(tb)
    for trial_id in ta:
        for table in COMPARED_TABLES:
            fa, fb = ta[trial_id] / f"{table}.parquet", tb[trial_id] / f"{table}.parquet"
            assert fa.read_bytes() == fb.read_bytes(), (trial_id, table)
        assert metrics(ta[trial_id]) == metrics(tb[trial_id]), trial_id
        calls_a = pd.read_parquet(ta[trial_id] / "llm_calls.parquet")
        calls_b = pd.read_parquet(tb[trial_id] / "llm_calls.parquet")
        same = ["call_id", "request_seed", "prompt_sha256", "status"]  # `cached` and `attempts` differ on replay
        pd.testing.assert_frame_equal(calls_a[same], calls_b[same])
