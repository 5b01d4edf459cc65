"""`pvsst judge RUN --judge NAME`: every parsed post judged, every call on record and cached, the judge
templates hashed, two judges' agreement equal to the weighted kappa of their confusion matrix, bad input
exit 2 with one line and nothing written.

The run: ``scripted/planted_contradiction`` (posts argue the other side at rate 0.2), one topic, two
seeds x two arms (control, likes), 6 agents x 3 rounds: 4 trials, 72 posts.
"""
from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pandas as pd
import pytest
from judge_helpers import independent_kappa, planted_run, register_test_judges

from pvsst.experiments.cli import main
from pvsst.sim.judges.lexicon import LexiconJudge
from pvsst.sim.materials import default_materials_dir
from pvsst.sim.topics import get_topic

JUDGMENTS = ("analysis", "judgments")


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    register_test_judges()
    return planted_run(tmp_path_factory.mktemp("judge"))


@pytest.fixture
def run(planted, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(planted, copy)
    return copy


def judgments(run, slug: str) -> tuple[pd.DataFrame, dict]:
    folder = run.joinpath(*JUDGMENTS)
    return pd.read_parquet(folder / f"{slug}.parquet"), json.loads((folder / f"{slug}.json").read_text())


def test_a_model_judge_reads_every_post_on_record_and_a_rerun_calls_nothing(run, capsys):
    assert main(["judge", str(run), "--judge", "scripted/lexicon_judge"]) == 0
    table, provenance = judgments(run, "scripted-lexicon_judge")
    posts = pd.read_parquet(next((run / "trials").glob("*/posts.parquet")))
    assert len(table) == 72 and table["judged_stance"].notna().all()
    assert provenance["judge"] == provenance["model"] == "scripted/lexicon_judge"
    assert (provenance["posts"], provenance["judged"], provenance["calls"],
            provenance["failed_calls"]) == (72, 72, 72, 0)
    shipped = default_materials_dir()
    assert provenance["templates"] == "pvsst"
    assert provenance["template_sha256"] == {name: hashlib.sha256((shipped / name).read_bytes()).hexdigest()
                                             for name in ("judge.txt", "judge_system.txt")}
    calls = pd.read_parquet(run.joinpath(*JUDGMENTS, "scripted-lexicon_judge.llm_calls.parquet"))
    prompts = pd.read_parquet(run.joinpath(*JUDGMENTS, "scripted-lexicon_judge.prompts.parquet"))
    assert len(calls) == 72 and set(calls["phase"]) == {"judge"} and (calls["status"] == "ok").all()
    assert set(calls["prompt_sha256"]) == set(prompts["prompt_sha256"])
    assert sorted(zip(calls["trial_id"], calls["round"], calls["agent_id"])) == sorted(
        zip(table["trial_id"], table["round"], table["agent_id"]))
    # the post is in the prompt byte for byte, after the template's "POST: "
    first = posts[posts["parse_ok"]].iloc[0]
    assert any(f"POST: {first['text']}\n" in user for user in prompts["user"])
    fresh = provenance["calls"] - provenance["cache_hits"]
    assert fresh > 0
    # the language-model path reads as the lexicon does
    lexicon = LexiconJudge().judge(list(posts["text"]), get_topic("ai_labels"))
    mine = table[table["trial_id"] == first["trial_id"]].sort_values(["round", "agent_id"])
    assert mine["judged_label"].tolist() == [lexicon[i] for i in posts.sort_values(["round", "agent_id"]).index]
    capsys.readouterr()
    # every trial is judged (DONE): a rerun skips them all and makes no call; the judge's files stay as they were
    assert main(["judge", str(run), "--judge", "scripted/lexicon_judge"]) == 0
    again, second = judgments(run, "scripted-lexicon_judge")
    assert {k: v for k, v in second.items() if k != "judged_at"} == {k: v for k, v in provenance.items()
                                                                     if k != "judged_at"}
    pd.testing.assert_frame_equal(again, table)
    assert "4 judged trials: 0 done, 0 failed, 4 skipped; 0 calls" in capsys.readouterr().out
    manifest = json.loads((run / "manifest.json").read_text())
    assert {entry["status"] for entry in manifest["judgments/scripted-lexicon_judge"].values()} == {"done"}
    assert all((unit / "DONE").is_file() for unit in (run / "judgments" / "scripted-lexicon_judge").iterdir())


def test_two_judges_agree_by_the_kappa_of_their_confusion_matrix(run, capsys):
    assert main(["judge", str(run), "--judge", "lexicon"]) == 0
    assert main(["judge", str(run), "--judge", "scripted/shifted_judge"]) == 0
    out = capsys.readouterr().out
    assert main(["analyze", str(run), "--homophily-replicates", "2"]) == 0
    first, _ = judgments(run, "lexicon")
    second, _ = judgments(run, "scripted-shifted_judge")
    both = first.merge(second, on=["trial_id", "round", "agent_id"])
    a, b = both["judged_stance_x"].to_numpy(int), both["judged_stance_y"].to_numpy(int)
    moved = int((a != b).sum())
    assert 0 < moved < len(a)  # the shifted judge moves about a quarter of the posts one level
    row = pd.read_csv(run / "analysis" / "judge_agreement.csv").iloc[0]
    assert (row["first_judge"], row["second_judge"], row["n"]) == ("lexicon", "scripted/shifted_judge", 72)
    assert row["raw_agreement"] == pytest.approx((72 - moved) / 72, abs=1e-12)
    assert row["kappa_linear"] == pytest.approx(independent_kappa(a, b, 1), abs=1e-9)
    assert row["kappa_quadratic"] == pytest.approx(independent_kappa(a, b, 2), abs=1e-9)
    assert row["side_agreement"] == pytest.approx(np.mean(np.sign(a) == np.sign(b)), abs=1e-12)
    assert f"weighted kappa linear {row['kappa_linear']:.3f}" in out
    # analyze kept the judgments and read the model judge (no spec setting): its name is on the rows
    assert (run / "analysis" / "judgments" / "lexicon.parquet").is_file()
    outcomes = pd.read_csv(run / "analysis" / "trial_outcomes.csv")
    assert set(outcomes["stance_judge"]) == {"scripted/shifted_judge"}


def test_own_judge_templates_are_used_and_hashed(run, tmp_path):
    own = tmp_path / "materials"
    own.mkdir()
    (own / "judge_system.txt").write_text("Rate posts. JSON only.")
    (own / "judge.txt").write_text("TOPIC: $question\nPOST: $post\nWhich stance? One of $choices.")
    assert main(["judge", str(run), "--judge", "scripted/lexicon_judge", "--materials", str(own)]) == 0
    _, provenance = judgments(run, "scripted-lexicon_judge")
    assert provenance["templates"] == str(own.resolve())
    assert provenance["template_sha256"]["judge.txt"] == hashlib.sha256((own / "judge.txt").read_bytes()).hexdigest()
    prompts = pd.read_parquet(run.joinpath(*JUDGMENTS, "scripted-lexicon_judge.prompts.parquet"))
    assert prompts["system"].eq("Rate posts. JSON only.").all()
    assert prompts["user"].str.endswith('One of "strongly support", "support", "lean support", "neutral", '
                                        '"lean oppose", "oppose", "strongly oppose".').all()


def test_failed_judge_calls_exit_1_and_leave_the_posts_unjudged(run, capsys):
    assert main(["judge", str(run), "--judge", "scripted/mute_judge"]) == 1
    table, provenance = judgments(run, "scripted-mute_judge")
    assert table["judged_stance"].isna().all() and table["judged_label"].isna().all()
    assert provenance["failed_calls"] == 72 and provenance["judged"] == 0
    assert provenance["failed_statuses"] == {"parse_error": 72}
    assert "72 of 72 judge calls failed (parse_error: 72)" in capsys.readouterr().out
    calls = pd.read_parquet(run.joinpath(*JUDGMENTS, "scripted-mute_judge.llm_calls.parquet"))
    assert (calls["status"] == "parse_error").all() and (calls["attempts"] == 3).all()


@pytest.mark.parametrize("case, message", [
    ("no_run", "run directory: does not exist"),
    ("unknown_judge", "unknown provider prefix"),
    ("one_template", "give both judge templates or neither"),
    ("bad_placeholder", "$author: unknown placeholder"),
    ("no_judge", "--judge: give a judge"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(run, tmp_path, capsys, case, message):
    own = tmp_path / "own"
    own.mkdir()
    argv = ["judge", str(run), "--judge", "scripted/lexicon_judge"]
    if case == "no_run":
        argv[1] = str(tmp_path / "nowhere")
    elif case == "unknown_judge":
        argv[3] = "nosuchprovider/judge"
    elif case == "one_template":
        (own / "judge.txt").write_text("TOPIC: $question\nPOST: $post")
        argv += ["--materials", str(own)]
    elif case == "bad_placeholder":
        (own / "judge_system.txt").write_text("Rate.")
        (own / "judge.txt").write_text("TOPIC: $question\nPOST: $post by $author")
        argv += ["--materials", str(own)]
    else:
        argv = argv[:2]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not run.joinpath(*JUDGMENTS).exists()
