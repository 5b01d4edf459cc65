"""Thread studies as a product: the ``schedule: threads`` spec, frozen and run by ``pvsst run`` through the
run kernel (deterministic; SIGKILL then rerun equals an uninterrupted run; Ray), and its refusals."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import pvsst
from pvsst.core.run_layout import PERSONAS
from pvsst.experiments.cli import main
from pvsst.experiments.prereg.freeze import freeze, verify
from pvsst.experiments.threads.attribute_job import judge_attributes
from pvsst.experiments.threads.runner import run_thread_study
from pvsst.personas.synthesis import synthesize
from pvsst.sim.llm.cache import ResponseCache
from pvsst.sim.materials import default_materials_dir
from pvsst.sim.materials.catalog import THREAD_FILES
from pvsst.sim.threads.invariants import thread_invariant_problems

SHIPPED = Path(__file__).resolve().parents[2] / "experiments" / "specs" / "threads_scripted.yaml"
EVENT_TABLES = ("comments", "actions", "agents", "comment_votes", "prompts")
SMALL = {"  n_threads: 5": "  n_threads: 2", "  engaged_profiles: 40": "  engaged_profiles: 10", "  n: 60": "  n: 16"}
BUILT_IN = {"  n_threads: 5": "  n_threads: 2", "  engaged_profiles: 40": "  engaged_profiles: 10",
            "  source: census\n  n: 60\n  seed: 7": "  source: default"}  # PV-SST's 24 personas: no synthesis


def spec_copy(folder: Path, edits: dict[str, str] | None = None, *, frozen: bool = True) -> Path:
    """The shipped spec copied into ``folder`` (text ``edits`` applied), frozen unless told not to."""
    text = SHIPPED.read_text()
    for old, new in (edits or {}).items():
        assert old in text, old
        text = text.replace(old, new, 1)
    spec = folder / "threads.yaml"
    folder.mkdir(parents=True, exist_ok=True)
    spec.write_text(text)
    if frozen:
        freeze(spec)
    return spec


def thread_dirs(run: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted((run / "threads").iterdir()) if (p / "DONE").is_file()}


def assert_same_threads(a: Path, b: Path) -> None:
    """Same threads, byte-identical event tables, the same calls (``cached`` differs on a replay)."""
    ta, tb = thread_dirs(a), thread_dirs(b)
    assert sorted(ta) == sorted(tb) and ta
    for thread_id in ta:
        for table in EVENT_TABLES:
            file = f"{table}.parquet"
            assert (ta[thread_id] / file).read_bytes() == (tb[thread_id] / file).read_bytes(), (thread_id, table)
        same = ["call_id", "request_seed", "prompt_sha256", "status"]
        pd.testing.assert_frame_equal(pd.read_parquet(ta[thread_id] / "llm_calls.parquet")[same],
                                      pd.read_parquet(tb[thread_id] / "llm_calls.parquet")[same])


def test_a_thread_spec_runs_twice_to_the_same_bytes_within_its_caps(tmp_path, capsys):
    spec = spec_copy(tmp_path / "spec", BUILT_IN)
    for out in ("a", "b"):
        summary = run_thread_study(spec, tmp_path / out, progress=False)
        assert summary.line().startswith("2 threads: 2 done, 0 failed, 0 skipped"), summary.line()
    assert_same_threads(tmp_path / "a", tmp_path / "b")
    comments = pd.concat([pd.read_parquet(d / "comments.parquet") for d in thread_dirs(tmp_path / "a").values()])
    agents = pd.read_parquet(tmp_path / "a" / "threads" / "thread-000" / "agents.parquet")
    assert agents["role"].value_counts().to_dict() == {"engaged": 10, "author": 1}
    assert len(comments) > 10 and comments["depth"].max() >= 2
    assert thread_invariant_problems(comments, max_depth=5, max_children=3) == []
    tables = pvsst.open_run(tmp_path / "a")  # the notebook API reads a thread run too
    assert tables.kind == "threads" and len(tables.comments) == len(comments) and len(tables.personas) == 24
    # a rerun into the finished folder runs nothing; pvsst verify checks every thread's files
    again = run_thread_study(spec, tmp_path / "a", progress=False)
    assert again.line().startswith("2 threads: 0 done, 0 failed, 2 skipped"), again.line()
    assert main(["verify", str(tmp_path / "a")]) == 0
    assert "intact: 0 trials, 0 audit units, 0 survey units, 2 threads (12 files" in capsys.readouterr().out


def _run_cmd(spec: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "pvsst.experiments.cli", "run", str(spec), "--out", str(out)]


@pytest.fixture(scope="module")
def shipped_run(tmp_path_factory) -> tuple[Path, Path]:
    """The shipped 5-thread spec (40 engaged personas, 2 rounds) frozen in a copy, and its one local run:
    the reference the killed-and-resumed run and the Ray run are compared with."""
    folder = tmp_path_factory.mktemp("shipped")
    spec = spec_copy(folder / "spec")
    reference = folder / "local"
    summary = run_thread_study(spec, reference, progress=False)
    assert summary.line().startswith("5 threads: 5 done, 0 failed, 0 skipped; 523 calls"), summary.line()
    return spec, reference


@pytest.mark.slow
def test_the_shipped_spec_killed_mid_run_resumes_to_an_uninterrupted_runs_bytes(shipped_run, tmp_path):
    spec, reference = shipped_run
    crashed = tmp_path / "crashed"
    proc = subprocess.Popen(_run_cmd(spec, crashed), start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    try:  # kill once one thread is stored and the next has made calls
        while time.monotonic() < deadline and proc.poll() is None:
            if (crashed / "threads").is_dir() and len(thread_dirs(crashed)) >= 1:
                time.sleep(0.3)
                break
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    killed_at = len(thread_dirs(crashed))
    assert 1 <= killed_at < 5, killed_at
    finished = subprocess.run(_run_cmd(spec, crashed), capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr
    assert f"{killed_at} skipped" in finished.stdout, finished.stdout
    assert_same_threads(reference, crashed)
    cache = ResponseCache(crashed / "cache.sqlite")
    try:
        assert cache.repeated_keys() == 0 and len(cache) > 0  # no finished call made twice
    finally:
        cache.close()
    # the planted null control: the commenter never states an attribute, so the reader guesses at chance
    table = judge_attributes(crashed, "scripted/attribute_reader", progress=False).table
    assert len(table) == 5 and table["n_authors"].min() >= 50
    inside = (table["top1"] >= table["random_top1_low"]) & (table["top1"] <= table["random_top1_high"])
    assert inside.all(), table[["attribute", "top1", "random_top1_low", "random_top1_high"]]


@pytest.mark.slow
def test_the_shipped_spec_through_ray_stores_the_local_runs_bytes(shipped_run, tmp_path):
    ray = pytest.importorskip("ray")
    spec, reference = shipped_run
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    except Exception as err:  # noqa: BLE001 - no Ray on this machine: nothing to compare
        pytest.skip(f"ray.init failed: {err}")
    try:
        summary = run_thread_study(spec, tmp_path / "ray", executor="ray", workers=2, progress=False)
        assert summary.line().startswith("5 threads: 5 done, 0 failed, 0 skipped; 523 calls"), summary.line()
        assert_same_threads(reference, tmp_path / "ray")
        assert (reference / PERSONAS).read_bytes() == (tmp_path / "ray" / PERSONAS).read_bytes()
        engaged = pd.read_parquet(tmp_path / "ray" / "threads" / "thread-004" / "agents.parquet")["role"]
        assert engaged.value_counts().to_dict() == {"engaged": 40, "author": 1}
    finally:
        ray.shutdown()


ROUNDS = "  n_rounds: 2"
BAD_SETTINGS = [
    ({ROUNDS: ROUNDS + "\n  max_depth: 0"}, "threads.max_depth: Input should be greater than or equal to 1"),
    ({ROUNDS: ROUNDS + "\n  p_critic: -0.2"}, "threads.p_critic: Input should be greater than or equal to 0"),
    ({"  n_rounds: 2": "  n_rounds: 2\n  p_short: 1.5"}, "threads.p_short: Input should be less than or equal to 1"),
    ({"  n: 60": "  n: 30"}, "personas.n: 5 thread author(s) and 40 engaged personas per thread need at least 45"),
    ({"  n_rounds: 2": "  n_rounds: 2\n  max_children: 0"}, "threads.max_children: Input should be greater"),
]


@pytest.mark.parametrize(("edits", "fragment"), BAD_SETTINGS)
def test_malformed_thread_settings_exit_2_with_one_line_and_write_nothing(edits, fragment, tmp_path, capsys):
    spec = spec_copy(tmp_path, edits, frozen=False)
    assert main(["prereg", "freeze", str(spec)]) == 2
    assert main(["run", str(spec), "--out", str(tmp_path / "out"), "--deviation", "pilot"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and all(fragment in line and line.startswith("pvsst: error: ") for line in lines), lines
    assert not (tmp_path / "out").exists() and not (tmp_path / "threads.yaml.lock.json").exists()


def test_a_persona_file_too_small_for_the_threads_is_refused_before_the_run_folder(tmp_path, capsys):
    synthesize(12, seed=3).personas.to_csv(tmp_path / "few.csv", index=False)
    census = "  source: census\n  n: 60\n  seed: 7"
    spec = spec_copy(tmp_path, {census: "  source: file\n  path: few.csv"}, frozen=False)
    assert main(["run", str(spec), "--out", str(tmp_path / "out"), "--deviation", "pilot"]) == 2
    err = capsys.readouterr().err.strip()
    assert "engaged_profiles: 40 engaged personas per thread need at least 45 personas" in err and "\n" not in err, err
    assert not (tmp_path / "out").exists()


def test_unfrozen_thread_spec_and_estimate_are_refused_with_one_line(tmp_path, capsys):
    spec = spec_copy(tmp_path, frozen=False)
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 2
    assert main(["estimate", str(spec)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2, lines
    assert "lock: spec is not frozen" in lines[0]
    assert "schedule: pvsst estimate covers feed studies, not threads" in lines[1]
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def discloser_run(tmp_path_factory) -> Path:
    """A small thread run whose comments state their authors' attributes (the planted control)."""
    folder = tmp_path_factory.mktemp("discloser")
    spec = spec_copy(folder / "spec", {**SMALL, "model: scripted/thread_commenter": "model: scripted/thread_discloser"})
    run_thread_study(spec, folder / "run", progress=False)
    return folder / "run"


def test_show_prints_a_thread_as_an_indented_tree(discloser_run, capsys):
    assert main(["show", str(discloser_run), "thread-001"]) == 0
    lines = capsys.readouterr().out.splitlines()
    comments = pd.read_parquet(discloser_run / "threads" / "thread-001" / "comments.parquet")
    assert lines[0] == f"thread-001: {len(comments) - 1} comments, depth {comments['depth'].max()}"
    assert lines[1].startswith(f"@{comments['author'].iloc[0]} [post] ")
    assert {len(line) - len(line.lstrip(" ")) for line in lines[2:]} == {2 * d for d in set(comments["depth"]) - {0}}
    assert main(["show", str(discloser_run), "thread-099"]) == 2
    assert "no finished thread here (threads: thread-000, thread-001)" in capsys.readouterr().err


@pytest.mark.slow
def test_judge_analyze_report_on_a_thread_run_with_the_planted_discloser(discloser_run, capsys):
    assert main(["judge", "attributes", str(discloser_run), "--model", "scripted/attribute_reader"]) == 0
    out = capsys.readouterr().out
    assert "1 judges: 1 done, 0 failed, 0 skipped" in out, out
    assert main(["analyze", str(discloser_run), "--homophily-replicates", "20"]) == 0
    table = pd.read_csv(discloser_run / "analysis" / "attribute_inference.csv")
    assert set(table["attribute"]) == {"age", "sex", "location", "education", "income"}
    assert (table["top1"] >= 0.95).all(), table[["attribute", "top1"]]  # an author who states it is read back
    assert (table["top1"] > table["random_top1_high"]).all()  # above what chance reaches
    shape = pd.read_csv(discloser_run / "analysis" / "thread_shape.csv")
    assert shape["thread_id"].tolist() == ["thread-000", "thread-001"] and (shape["max_depth"] <= 5).all()
    homophily = pd.read_csv(discloser_run / "analysis" / "reply_homophily.csv")
    assert "same_group_share:party" in set(homophily["measure"]) and (homophily["replicates"] == 20).all()
    assert main(["report", str(discloser_run), "--figures", "png", "--format", "md",
                 "--homophily-replicates", "20"]) == 0
    report = (discloser_run / "report" / "report.md").read_text()
    for heading in ("## Thread shape", "## Reply homophily", "## Lexical convergence", "## Attribute inference"):
        assert heading in report
    assert "scripted/attribute_reader" in report
    header = next(line for line in report.splitlines() if line.startswith("| judge "))
    for column in ("top1_low", "top3", "top3_low", "top3_high", "majority_top3", "random_top3_high"):
        assert f" {column} " in header, header
    figures = sorted(p.name for p in (discloser_run / "report" / "figures").iterdir())
    assert figures[0] == "thread_depth_histogram.png" and figures[1].startswith("thread_tree_thread-00")
    # judging again makes no call
    assert main(["judge", "attributes", str(discloser_run), "--model", "scripted/attribute_reader"]) == 0
    assert "0 done, 0 failed, 1 skipped" in capsys.readouterr().out


def test_judge_attributes_refuses_a_folder_that_is_not_a_thread_run(tmp_path, capsys):
    assert main(["judge", "attributes", str(tmp_path), "--model", "scripted/attribute_reader"]) == 2
    err = capsys.readouterr().err.strip()
    assert "not a thread run" in err and "\n" not in err, err


@pytest.mark.slow
@pytest.mark.embedded
def test_a_thread_spec_runs_end_to_end_on_the_embedded_model(tmp_path, capsys):
    pytest.importorskip("llama_cpp")
    settings = ("\n  max_actions: 1\n  comment_probability: 1.0\n  comment_probability_floor: 1.0\n  max_tokens: 24\n"
                "  post_max_tokens: 48\nmax_attempts: 1\nparse_failure_threshold: 1.0")
    spec = spec_copy(tmp_path / "spec", {
        "  n_threads: 5": "  n_threads: 1", "  engaged_profiles: 40": "  engaged_profiles: 2",
        "  n_rounds: 2": "  n_rounds: 1" + settings, "  n: 60": "  n: 4",
        "model: scripted/thread_commenter": "model: embedded/smollm2-135m"})
    assert main(["run", str(spec), "--out", str(tmp_path / "run")]) == 0
    assert "1 threads: 1 done, 0 failed, 0 skipped; 3 calls" in capsys.readouterr().out
    assert main(["show", str(tmp_path / "run"), "thread-000"]) == 0
    assert capsys.readouterr().out.startswith("thread-000: 2 comments, depth ")


def test_the_shipped_thread_spec_matches_its_lock_which_covers_its_templates():
    result = verify(SHIPPED)
    assert result.ok, "\n".join(result.changed_fields)
    assert result.lock.spec_id == "threads_scripted" and result.lock.spec["schedule"] == "threads"
    assert set(THREAD_FILES) <= set(result.lock.materials)


def test_editing_a_thread_template_after_freezing_is_refused(tmp_path, capsys):
    materials = tmp_path / "wording"
    materials.mkdir()
    for name in THREAD_FILES:
        (materials / name).write_bytes((default_materials_dir() / name).read_bytes())
    spec = spec_copy(tmp_path, {"seed: 20260501": "seed: 20260501\nmaterials: wording"})
    post = materials / "thread_post.txt"
    post.write_text(post.read_text() + "\nBe brief.\n")
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert "thread_post.txt: sha256: changed since the spec was frozen" in err and "\n" not in err, err
    assert not (tmp_path / "out").exists()
