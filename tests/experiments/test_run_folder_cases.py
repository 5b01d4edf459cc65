"""Run folders as a careless or hurried user meets them: one row per case, each with its exit code, at most one
stderr line (no traceback) for a refusal, a phrase of that line, and everything on disk byte-identical after a
refusal (the user's files, the run store, the inputs; only the lock file's holder record may change).

The rows follow the cases that once broke the promise: ``--out`` into a folder that is not a run's, input files
edited after freezing or not regular files, a run store edited after it was written, bombs in a spec,
one-line errors, and the smaller ones (a refused deviation writes nothing, budgets, stops on stderr). Every
command runs in this process (``main(argv)``) on a tiny frozen study (1 topic x 1 seed x 4 arms, 4 agents x
2 rounds) and one finished run of it, copied for each row.
"""
from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from builders import weighted_frame, weighted_instrument
from runner_helpers import small_smoke_spec

from pvsst.core.run_layout import LOCK
from pvsst.experiments.cli import main
from pvsst.experiments.prereg.freeze import freeze

TRIAL = "scripted-imitate__ai_labels__101__likes"


@dataclass(frozen=True)
class Case:
    """``setup(w)`` prepares the workspace ``w`` and returns the command's words; ``code`` its exit code,
    ``phrase`` a phrase of its stderr (of stdout with ``stream="out"``). A refused command (code 2) changes
    nothing on disk; ``kept`` names the files that must survive a command that succeeds."""

    setup: Callable[["Workspace"], list[str]]
    code: int
    phrase: str
    stream: str = "err"
    kept: tuple[str, ...] = ()


@dataclass
class Workspace:
    root: Path
    spec: Path        # the frozen tiny study
    run: Path         # a finished run of it
    files_spec: Path  # a frozen study naming a persona table and an edge list
    project: Path     # a user's project folder

    def spec_with(self, text: str, name: str = "edited.yaml", *, frozen: bool = False) -> Path:
        """The tiny study with the top-level line ``text`` (``key: value``) in place of its line of that key,
        else before its execution section; written beside the original."""
        path = self.spec.with_name(name)
        lines = self.spec.read_text().splitlines(keepends=True)
        key = text.split(":", 1)[0] + ":"
        at = next((i for i, line in enumerate(lines) if line.startswith(key)), None)
        if at is None:
            at = lines.index("execution:\n")
            lines.insert(at, text + "\n")
        else:
            lines[at] = text + "\n"
        path.write_text("".join(lines))
        if frozen:
            freeze(path)
        return path

    def spec_replacing(self, old: str, new: str) -> Path:
        """The tiny study with ``old`` replaced by ``new``, beside the original."""
        path = self.spec.with_name("replaced.yaml")
        text = self.spec.read_text()
        assert old in text
        path.write_text(text.replace(old, new))
        return path


# -- setups ------------------------------------------------------------------------------------------------

def first(effect, argv: list[str]) -> list[str]:
    """``argv``, once ``effect`` (an expression evaluated for its action) is done."""
    return argv


def _edit_stance(trial: Path) -> None:
    posts = pd.read_parquet(trial / "posts.parquet")
    posts.loc[0, "stance"] = -posts.loc[0, "stance"] or 1
    posts.to_parquet(trial / "posts.parquet", index=False)


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


TAMPERING = {  # an edit of the finished run -> the file the refusal names
    "stance_edited": (lambda w: _edit_stance(w.run / "trials" / TRIAL), "posts.parquet"),
    "votes_deleted": (lambda w: (w.run / "trials" / TRIAL / "votes.parquet").unlink(), "votes.parquet"),
    "parquet_truncated": (lambda w: _truncate(w.run / "trials" / TRIAL / "exposures.parquet"), "exposures.parquet"),
    "manifest_corrupt": (lambda w: (w.run / "manifest.json").write_text('{"runs": [ {"started'), "manifest"),
}
READERS = {  # the commands that must refuse a tampered run
    "resume": lambda w: ["run", str(w.spec), "--out", str(w.run)],
    "analyze": lambda w: ["analyze", str(w.run), "--homophily-replicates", "2"],
    "report": lambda w: ["report", str(w.run), "--format", "md", "--figures", "png"],
    "verify": lambda w: ["verify", str(w.run)],
}


def _tampered(edit, reader):
    def setup(w: Workspace) -> list[str]:
        edit(w)
        return reader(w)
    return setup


def _bomb(w: Workspace) -> list[str]:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi")]
    path = w.spec.with_name("bomb.yaml")
    path.write_text(w.spec.read_text().replace("description:", "\n".join(["x-bomb:"] + [f"  {line}" for line in lines])
                                               + "\ndescription:"))
    return ["prereg", "freeze", str(path)]


def _topic_file_bomb(w: Workspace) -> list[str]:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi")]
    path = w.root / "topics.yaml"
    path.write_text("\n".join(lines) + "\ntopics: [*i]\n")
    return ["simulate", "--topic-file", str(path), "--model", "scripted/imitate", "--out", str(w.root / "one")]


def _edge_list_at(target: str):
    def setup(w: Workspace) -> list[str]:
        if target == "fifo":
            os.mkfifo(w.root / "edges.fifo")
        where = {"fifo": str(w.root / "edges.fifo"), "directory": str(w.root)}.get(target, target)
        return ["prereg", "freeze", str(w.spec_with(f"trial: {{n_agents: 4, n_rounds: 2, network: {{kind: edgelist, "
                                                    f"path: '{where}'}}}}").as_posix())]
    return setup


def _survey(frame_edit: Callable[[pd.DataFrame], pd.DataFrame], *, filter_: str | None = "year == 2012",
            sparse: bool = False):
    def setup(w: Workspace) -> list[str]:
        data = w.root / "survey.csv"
        if sparse:
            with open(data, "wb") as handle:
                handle.truncate(1 << 30)  # 1 GiB of NUL bytes, none of them on disk
        else:
            frame_edit(weighted_frame()).to_csv(data, index=False)
        instrument = w.root / "instrument.yaml"
        instrument.write_text(yaml.safe_dump(weighted_instrument(data, filter_=filter_)))
        return ["prereg", "freeze", str(instrument)]
    return setup


def _in_project(words: list[str]):
    def setup(w: Workspace) -> list[str]:
        os.chdir(w.project)
        return [str(w.spec) if word == "SPEC" else word for word in words]
    return setup


def _user_file_in(folder: str, command: str):
    def setup(w: Workspace) -> list[str]:
        (w.run / folder).mkdir(exist_ok=True)
        (w.run / folder / "mine.txt").write_text("my notes\n")
        return READERS[command](w)
    return setup


CASES: dict[str, Case] = {
    # --out and folders that are not pvsst's
    "run_into_a_project_folder": Case(_in_project(["run", "SPEC", "--out", "."]), 2,
                                      "holds files that are not a pvsst run"),
    "analyze_a_project_folder": Case(_in_project(["analyze", "."]), 2, "manifest.json: missing (not a pvsst run"),
    "report_a_project_folder": Case(_in_project(["report", "."]), 2, "manifest.json: missing (not a pvsst run"),
    "run_out_empty_name": Case(lambda w: ["run", str(w.spec), "--out", ""], 2, "an empty name"),
    "analyze_empty_name": Case(lambda w: ["analyze", ""], 2, "an empty name"),
    "report_out_empty_name": Case(lambda w: ["report", "--from-table", str(w.root / "t.csv"), "--out", ""], 2,
                                  "an empty name"),
    "run_out_300_characters": Case(lambda w: ["run", str(w.spec), "--out", str(w.root / ("r" * 300))], 2,
                                   "at most 255"),
    "run_out_is_a_file": Case(lambda w: ["run", str(w.spec), "--out", str(w.project / "analysis" / "my_script.py")],
                              2, "is a file, not a folder"),
    "run_out_is_dev_full": Case(lambda w: ["run", str(w.spec), "--out", "/dev/full"], 2, "a device or special file"),
    "analyze_with_a_user_file_in_analysis": Case(_user_file_in("analysis", "analyze"), 2,
                                                 "mine.txt: run folder: not written by pvsst"),
    "report_with_a_user_file_in_report": Case(_user_file_in("report", "report"), 2,
                                              "mine.txt: run folder: not written by pvsst"),
    "resume_keeps_a_user_file_in_materials": Case(_user_file_in("materials", "resume"), 0, "",
                                                  kept=("run/materials/mine.txt",)),
    "another_spec_into_a_run_folder": Case(lambda w: ["run", str(w.spec_with("budget: {max_usd: 5.0}", frozen=True)),
                                                      "--out", str(w.run)], 2, "holds a run of a different spec"),
    "simulate_into_a_run_of_another_spec": Case(lambda w: ["simulate", "--topic", "ai_labels", "--model",
                                                            "scripted/imitate", "--out", str(w.run)], 2,
                                                 "holds another run (not `pvsst simulate` with these options)"),
    "a_survey_into_a_study_run_folder": Case(lambda w: first(_survey(lambda f: f)(w),
                                             ["survey", "run", str(w.root / "instrument.yaml"), "--out", str(w.run),
                                              "--deviation", "unfrozen"]), 2, "holds a study run, not a survey run"),
    "manifest_deleted_then_another_spec": Case(lambda w: first((w.run / "manifest.json").unlink(),
                                               ["run", str(w.spec_with("budget: {max_usd: 5.0}", frozen=True)),
                                                "--out", str(w.run)]), 2, "manifest: missing, but the folder holds"),
    # files the lock covers, and files that are not regular files
    "persona_table_edited_after_freeze": Case(
        lambda w: first(_append(w.files_spec.parent / "people.csv", "\n"),
                        ["run", str(w.files_spec), "--out", str(w.root / "new")]), 2,
        "people.csv: sha256: changed since the spec was frozen"),
    "edge_list_edited_after_freeze": Case(
        lambda w: first((w.files_spec.parent / "edges.txt").write_text("a00 a02\n"),
                        ["run", str(w.files_spec), "--out", str(w.root / "new")]), 2,
        "edges.txt: sha256: changed since"),
    "prereg_verify_names_an_edited_persona_table": Case(
        lambda w: first(_append(w.files_spec.parent / "people.csv", "\n"), ["prereg", "verify", str(w.files_spec)]),
        1, "people.csv", stream="out"),
    "edge_list_at_dev_urandom": Case(_edge_list_at("/dev/urandom"), 2, "a device, not a regular file"),
    "edge_list_a_fifo": Case(_edge_list_at("fifo"), 2, "a FIFO (named pipe), not a regular file"),
    "edge_list_a_directory": Case(_edge_list_at("directory"), 2, "a directory, not a regular file"),
    # bombs and bounds
    "billion_laughs": Case(_bomb, 2, "expands to more than 200,000 values"),
    "billion_laughs_in_a_topic_file": Case(_topic_file_bomb, 2, "expands to more than 200,000 values"),
    "feed_size_1e9": Case(lambda w: ["prereg", "freeze", str(w.spec_with("trial: {feed_size: 1000000000}"))], 2,
                          "trial.feed_size: Input should be less than or equal to 1000"),
    "bootstrap_draws_1e12": Case(lambda w: ["prereg", "freeze", str(w.spec_replacing(
        "bootstrap_draws: 2000", "bootstrap_draws: 1000000000000"))], 2, "less than or equal to 1000000"),
    "integer_of_5000_digits": Case(lambda w: ["prereg", "freeze",
                                              str(w.spec_with(f"budget: {{max_tokens: {'9' * 5000}}}"))],
                                   2, "(4300 digits)"),
    "deep_nesting": Case(lambda w: ["prereg", "freeze", str(w.spec_with("x: " + "[" * 100_000 + "]" * 100_000))], 2,
                         "yaml"),
    # survey data
    "survey_weight_inf": Case(_survey(lambda f: f.assign(wt=np.where(f["year"] == 2012, np.inf, f["wt"]))), 2,
                              "column 'wt' must hold finite numbers"),
    "survey_weights_all_zero": Case(_survey(lambda f: f.assign(wt=0.0)), 2, "column 'wt': every weight is zero"),
    "survey_question_never_answered": Case(_survey(lambda f: f.assign(q=np.nan)), 2, "no respondent answers 'q'"),
    "survey_data_a_sparse_1gb_csv": Case(_survey(lambda f: f, sparse=True), 2, "holds NUL bytes"),
    # a refused deviation writes nothing
    "deviation_with_a_missing_persona_table": Case(
        lambda w: ["run", str(w.spec_with("personas: {source: file, path: nobody.csv}")), "--out", str(w.root / "new"),
                   "--deviation", "new people"], 2, "nobody.csv: personas.path: no such file"),
    "deviation_with_a_bad_edge_list": Case(
        lambda w: first((w.root / "bad_edges.txt").write_text("a00 zz9\n"),
                        ["run", str(w.spec_with(f"trial: {{n_agents: 4, n_rounds: 2, network: {{kind: edgelist, path: "
                                                f"'{w.root / 'bad_edges.txt'}'}}}}")), "--out", str(w.root / "new"),
                         "--deviation", "new edges"]), 2, "unknown agent id 'zz9'"),
    # budgets and stops
    "a_zero_dollar_budget_runs_a_free_model": Case(
        lambda w: ["run", str(w.spec), "--out", str(w.root / "new"), "--budget", "0"], 0, ""),
    "a_zero_token_budget_stops_on_stderr": Case(
        lambda w: ["run", str(w.spec_with("budget: {max_tokens: 0}", frozen=True)), "--out", str(w.root / "new")], 3,
        "stopped: LLM budget exceeded: spent 0 tokens of a 0-token cap"),
    "replay_only_miss_stops_on_stderr": Case(
        lambda w: ["run", str(w.spec), "--out", str(w.root / "new"), "--replay-only"], 4, "stopped: replay-only"),
}
CASES.update({f"{edit}_{reader}": Case(_tampered(TAMPERING[edit][0], READERS[reader]), 2, TAMPERING[edit][1])
              for edit in TAMPERING for reader in READERS})


# -- the runner ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def originals(tmp_path_factory):
    """The tiny frozen study, a finished run of it, and a frozen study naming a persona table and an edge list."""
    from pvsst.personas.synthesis import synthesize

    base = tmp_path_factory.mktemp("originals")
    spec = small_smoke_spec(base / "spec", "[101]", topics="[ai_labels]")
    assert main(["run", str(spec), "--out", str(base / "run")]) == 0
    folder = base / "files_spec"
    folder.mkdir()
    synthesize(8, geography="US", seed=3).personas.to_csv(folder / "people.csv", index=False)
    (folder / "edges.txt").write_text("a00 a01\na01 a02\na02 a03\na03 a00\n")
    files_spec = folder / "study.yaml"
    files_spec.write_text(spec.read_text().replace("trial: {n_agents: 4, n_rounds: 2}",
                                                   "trial: {n_agents: 4, n_rounds: 2, "
                                                   "network: {kind: edgelist, path: edges.txt}}\n"
                                                   "personas: {source: file, path: people.csv}"))
    freeze(files_spec)
    return base


@pytest.fixture
def workspace(originals, tmp_path, monkeypatch) -> Workspace:
    monkeypatch.chdir(tmp_path)
    for name in ("spec", "run", "files_spec"):
        shutil.copytree(originals / name, tmp_path / name, symlinks=True)
    project = tmp_path / "project"
    for name, text in (("analysis/my_script.py", "print('mine')\n"), ("report/notes.md", "# mine\n"),
                       ("materials/NOTES.md", "mine\n")):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    return Workspace(tmp_path, tmp_path / "spec" / "scripted_smoke.yaml", tmp_path / "run",
                     tmp_path / "files_spec" / "study.yaml", project)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (but run-folder lock files) and its bytes; FIFOs by name only."""
    files = {}
    for path in sorted(root.rglob("*")):
        if path.name == LOCK or path.is_dir():
            continue
        name = path.relative_to(root).as_posix()
        files[name] = path.read_bytes() if path.is_file() and path.stat().st_size < 1 << 24 else b"<special>"
    return files


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, workspace, capfd):
    case = CASES[name]
    if name == "run_out_is_dev_full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    argv = case.setup(workspace)
    before = snapshot(workspace.root)
    capfd.readouterr()
    code = main(argv)
    out, err = capfd.readouterr()
    assert code == case.code, (out, err)
    assert "Traceback" not in err and "Traceback" not in out
    if case.code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("pvsst: error: "), err
        assert snapshot(workspace.root) == before  # nothing written, nothing lost
    assert case.phrase in (out if case.stream == "out" else err), (out, err)
    if case.code in (3, 4):  # a stop is said on stderr, once
        assert "stopped:" not in out and len(err.strip().splitlines()) == 1
    for kept in case.kept:
        assert (workspace.root / kept).read_bytes() == before[kept]


def test_a_second_writer_is_refused_naming_the_holder(workspace, capfd):
    import fcntl

    holder = {"pid": 4242, "host": "lab-7", "command": "pvsst run other.yaml --out run", "started_at": "earlier"}
    descriptor = os.open(workspace.run / LOCK, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another process, as far as the lock can tell
        os.ftruncate(descriptor, 0)
        os.write(descriptor, json.dumps(holder).encode())
        before = snapshot(workspace.root)
        capfd.readouterr()
        for argv in (["run", str(workspace.spec), "--out", str(workspace.run)], ["analyze", str(workspace.run)],
                     ["report", str(workspace.run)], ["verify", str(workspace.run)]):
            assert main(argv) == 2, argv
            err = capfd.readouterr().err.strip()
            assert len(err.splitlines()) == 1 and "pid 4242 on lab-7, `pvsst run other.yaml --out run`" in err, err
        assert snapshot(workspace.root) == before
    finally:
        os.close(descriptor)
    assert main(["verify", str(workspace.run)]) == 0
    assert "intact: 4 trials" in capfd.readouterr().out


def test_a_corrupt_cache_row_is_dropped_asked_again_and_recorded(workspace, capfd):
    import sqlite3

    with sqlite3.connect(workspace.run / "cache.sqlite") as db:
        db.execute("UPDATE responses SET parsed = '{broken'")
    kept = (workspace.run / "trials" / TRIAL / "posts.parquet").read_bytes()
    shutil.rmtree(workspace.run / "trials" / TRIAL)  # its calls now meet corrupt rows
    assert main(["run", str(workspace.spec), "--out", str(workspace.run)]) == 0
    assert (workspace.run / "trials" / TRIAL / "posts.parquet").read_bytes() == kept
    dropped = json.loads((workspace.run / "manifest.json").read_text())["cache_rows_dropped"]
    assert dropped and all(row["reason"].startswith("parsed: not JSON") for row in dropped)
    assert main(["verify", str(workspace.run)]) == 0


def test_retry_degraded_reruns_the_degraded_trials(workspace, capfd):
    from flaky_provider import FlakyProvider
    from runner_helpers import assert_same_run_store

    from pvsst.sim.llm.providers.registry import register_scripted_provider

    register_scripted_provider("flaky", "flaky_provider:FlakyProvider")
    spec = workspace.spec.with_name("flaky.yaml")
    spec.write_text(workspace.spec.read_text().replace("models: [scripted/imitate]", "models: [scripted/flaky]"))
    freeze(spec)
    run = workspace.root / "flaky_run"
    FlakyProvider.failing = True
    try:
        assert main(["run", str(spec), "--out", str(run)]) == 1
    finally:
        FlakyProvider.failing = False
    statuses = {t["status"] for t in json.loads((run / "manifest.json").read_text())["trials"].values()}
    assert statuses == {"degraded"}
    assert main(["run", str(spec), "--out", str(run)]) == 1  # resuming does not make them a success
    assert "4 degraded" in capfd.readouterr().err
    assert main(["run", str(spec), "--out", str(run), "--retry-degraded"]) == 0
    assert "4 trials: 4 done, 0 failed, 0 skipped" in capfd.readouterr().out
    statuses = {t["status"] for t in json.loads((run / "manifest.json").read_text())["trials"].values()}
    assert statuses == {"done"}
    clean = workspace.root / "clean_run"
    assert main(["run", str(spec), "--out", str(clean)]) == 0
    assert_same_run_store(clean, run)
