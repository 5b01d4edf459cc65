"""A worker needs no file of the driver's. A spec's own materials directory and edge
list travel in the block task as bytes (pvsst.experiments.study.files); a worker that cannot see the spec's
folder runs the block from its staged copies, and the trials equal those of a normal run."""
from __future__ import annotations

import pickle
import shutil

import pytest
from runner_helpers import assert_same_run_store, study_with_own_files, trial_dirs

from pvsst.core.errors import InputError
from pvsst.experiments.cli import main
from pvsst.experiments.run.executors import InlineExecutor
from pvsst.experiments.run.manifest import RunManifest
from pvsst.experiments.spec.study import load_spec
from pvsst.experiments.study import runner as runner_module
from pvsst.experiments.study.blocks import BlockWorker
from pvsst.experiments.study.files import StudyFiles, collect_study_files
from pvsst.sim.materials import MATERIAL_FILES


def test_the_spec_files_travel_as_bytes_and_a_worker_without_them_runs_the_block(tmp_path, monkeypatch):
    spec = study_with_own_files(tmp_path / "study")
    files, origins = collect_study_files(load_spec(spec), spec.parent)
    assert origins == {"materials": str(spec.parent / "my_materials"), "edge_list": str(spec.parent / "edges.txt")}
    assert [name for name, _ in files.materials] == sorted(MATERIAL_FILES)
    assert files.edge_list == (spec.parent / "edges.txt").read_bytes() and files.edge_list_name == "edges.txt"

    tasks = []
    real_map = InlineExecutor.map

    def recording_map(self, fn, work, on_error=None):
        for task in work:
            tasks.append(task)
        return real_map(self, fn, tasks, on_error)

    monkeypatch.setattr(InlineExecutor, "map", recording_map)
    normal = tmp_path / "normal"
    assert runner_module.run_study(spec, normal, workers=1, progress=False).exit_code == 0
    assert len(trial_dirs(normal)) == 8 and len(tasks) == 8  # 2 topics x 4 arms, a task per trial in-process

    study_dir = str(spec.parent.resolve()).encode()
    for task in tasks:
        payload = pickle.dumps(task)
        assert study_dir not in payload  # no path of the spec's files (the spec names them relative to itself)
        assert task.files == files

    # The worker's machine: the spec's folder is gone; the block runs from the staged copies.
    monkeypatch.setenv("PVSST_SCRATCH", str(tmp_path / "worker-scratch"))
    shutil.move(spec.parent, tmp_path / "elsewhere")
    outcomes = [outcome for task in tasks for outcome in BlockWorker().run(task)]
    assert [o.status for o in outcomes] == ["done"] * 8, [o.error for o in outcomes]
    staged = next((tmp_path / "worker-scratch" / "pvsst-study-files").iterdir())
    assert (staged / "materials" / "post_system.txt").read_text().startswith("Study-file wording. ")
    edges = outcomes[0].tables["edges"]
    assert sorted(zip(edges["source"], edges["target"])) == [("a00", "a01"), ("a01", "a02"), ("a02", "a03"),
                                                               ("a03", "a00")]

    from pvsst.experiments.run.store import write_table_directory

    replayed = tmp_path / "replayed"
    (replayed / "trials").mkdir(parents=True)
    for outcome in outcomes:
        write_table_directory(replayed / "trials", outcome.unit_id, outcome.tables, outcome.files)
    assert_same_run_store(normal, replayed)


def test_a_failed_trial_names_the_drivers_file_not_the_staged_copy(tmp_path, monkeypatch, capfd):
    spec = study_with_own_files(tmp_path / "study")
    (spec.parent / "edges.txt").write_text("a00 zz9\n")  # an id no agent has (after freezing: freeze refuses it)
    monkeypatch.setenv("PVSST_SCRATCH", str(tmp_path / "scratch"))
    capfd.readouterr()
    # The run checks the edge list against the lock, and under a deviation as a freeze would: refused, nothing written.
    assert main(["run", str(spec), "--out", str(tmp_path / "run")]) == 2
    assert f"{spec.parent / 'edges.txt'}: sha256: changed since the spec was frozen" in capfd.readouterr().err
    assert main(["run", str(spec), "--out", str(tmp_path / "run"), "--deviation", "new edges"]) == 2
    assert "edges.txt: network.path: unknown agent id 'zz9'" in capfd.readouterr().err
    assert not (tmp_path / "run").exists()
    # A file that fails only in the workers (the check skipped here) is named as the driver knows it.
    monkeypatch.setattr("pvsst.experiments.study.input.check_study_files", lambda spec, folder: None)
    assert main(["run", str(spec), "--out", str(tmp_path / "run"), "--deviation", "new edges"]) == 1
    out = capfd.readouterr().err
    assert "8 trials: 0 done, 8 failed" in out
    error = next(iter(RunManifest.load(tmp_path / "run").trials.values()))["error"]
    assert f"{spec.parent / 'edges.txt'}: network.path: unknown agent id 'zz9'" in error
    assert "pvsst-study-files" not in error and (tmp_path / "scratch" / "pvsst-study-files").is_dir()


def test_staging_is_once_per_content_and_a_missing_file_is_an_input_error(tmp_path):
    files = StudyFiles(materials=(("a.txt", b"x"),), edge_list=b"a00 a01\n")
    first, second = files.stage(tmp_path), files.stage(tmp_path)
    assert first == second and (first.materials_dir / "a.txt").read_bytes() == b"x"
    assert len(list((tmp_path / "pvsst-study-files").iterdir())) == 1
    other = StudyFiles(edge_list=b"a00 a02\n").stage(tmp_path)
    assert other.edge_list.read_bytes() == b"a00 a02\n" and other.edge_list.parent != first.edge_list.parent

    spec = study_with_own_files(tmp_path / "study")
    (spec.parent / "edges.txt").unlink()
    with pytest.raises(InputError, match="edges.txt: trial.network.path: no such file"):
        collect_study_files(load_spec(spec), spec.parent)
