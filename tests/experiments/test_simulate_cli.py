"""Bad input to `pvsst simulate` exits 2 with one line naming the problem and writes nothing."""
from __future__ import annotations

import pytest

from pvsst.experiments.cli import main

BASE = ["simulate", "--model", "scripted/imitate", "--rounds", "2"]


@pytest.mark.parametrize("args, needle", [
    (["--topic", "ai_labels", "--condition", "astroturf"], "condition"),
    (["--topic", "no_such_topic"], "no_such_topic"),
    (["--topic", "ai_labels", "--agents", "1"], "n_agents"),
    (["--topic", "ai_labels", "--feed-size", "0"], "feed_size"),
    (["--topic", "ai_labels", "--network", "edgelist:path=/nonexistent/edges.txt"], "edges.txt"),
    (["--topic", "ai_labels", "--network", "hypercube"], "network"),
    (["--topic", "ai_labels", "--model", "nosuchprovider/x"], "nosuchprovider"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, capfd, args, needle):
    out = tmp_path / "out"
    code = main(BASE + args + ["--out", str(out)])
    err = capfd.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and needle in err, err
    assert not out.exists()


def test_unreadable_edge_list_content_is_rejected(tmp_path, capfd):
    edges = tmp_path / "edges.txt"
    edges.write_text("a00 a01\na01 zz99\n")
    code = main(BASE + ["--topic", "ai_labels", "--agents", "4", "--network", f"edgelist:path={edges}",
                        "--out", str(tmp_path / "out")])
    err = capfd.readouterr().err.strip()
    assert code == 2 and "zz99" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_simulate_writes_a_complete_trial_directory(tmp_path, capfd):
    out = tmp_path / "out"
    code = main(BASE + ["--topic", "ai_labels", "--condition", "single_source", "--agents", "6", "--out", str(out)])
    assert code == 0, capfd.readouterr().err
    trial = out / "trials" / "scripted-imitate__ai_labels__101__single_source"
    names = {p.name for p in trial.iterdir()}
    assert names == {"agents.parquet", "posts.parquet", "votes.parquet", "exposures.parquet", "edges.parquet",
                     "llm_calls.parquet", "prompts.parquet", "metrics.json", "DONE"}
    assert {p.name for p in out.iterdir() if not p.name.startswith("cache.sqlite-")} == {
        "simulate.yaml", "manifest.json", "cache.sqlite", "materials", "trials", ".pvsst.lock"}
    assert not [p for p in (out / "trials").iterdir() if p.name.startswith(".tmp")]


def test_simulate_records_the_llm_string_as_the_model(tmp_path, capfd):
    """metrics.json's `model` is the --model string, never the Mesa model's repr."""
    import json

    import pandas as pd

    out = tmp_path / "out"
    code = main(BASE + ["--topic", "ai_labels", "--condition", "likes", "--agents", "4", "--out", str(out)])
    assert code == 0, capfd.readouterr().err
    trial = out / "trials" / "scripted-imitate__ai_labels__101__likes"
    metrics = json.loads((trial / "metrics.json").read_text())
    assert metrics["model"] == "scripted/imitate"
    calls = pd.read_parquet(trial / "llm_calls.parquet")
    assert set(calls["model"]) == {"scripted/imitate"}


def test_simulate_is_a_one_trial_study_with_the_trial_id_and_metrics_of_pvsst_run(tmp_path, capfd):
    """The trial `pvsst simulate` writes is the trial `pvsst run` writes for the same study (the spec
    simulate wrote beside it): same folder name, same metrics.json (timing aside), same tables; the
    manifest records the simulate run as a deviation from an unfrozen spec, with the trial's status."""
    import json

    out, run = tmp_path / "sim", tmp_path / "run"
    assert main(BASE + ["--topic", "ai_labels", "--condition", "likes", "--agents", "4", "--seed", "211",
                        "--out", str(out)]) == 0, capfd.readouterr().err
    assert main(["run", str(out / "simulate.yaml"), "--out", str(run), "--deviation", "both arms",
                 "--workers", "1"]) == 0, capfd.readouterr().err
    one = "scripted-imitate__ai_labels__211__likes"
    assert [p.name for p in (out / "trials").iterdir()] == [one]
    assert sorted(p.name for p in (run / "trials").iterdir()) == [one.replace("likes", "control"), one]
    timing = {"elapsed_seconds"}
    simulated, ran = (json.loads((d / "trials" / one / "metrics.json").read_text()) for d in (out, run))
    assert {k: v for k, v in simulated.items() if k not in timing} == {k: v for k, v in ran.items() if k not in timing}
    assert simulated["trial_id"] == one and simulated["push_direction"] == "oppose"  # PV-SST's seed map
    for table in ("agents", "posts", "votes", "exposures", "edges", "prompts"):
        assert (out / "trials" / one / f"{table}.parquet").read_bytes() == \
            (run / "trials" / one / f"{table}.parquet").read_bytes(), table
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["trials"][one]["status"] == "done" and list(manifest["trials"]) == [one]
    assert manifest["deviations"][0]["text"] == f"pvsst simulate: the one trial {one}"
