"""The stored prompts reproduce every call's prompt_sha256, and `pvsst show`
prints every round's feed, post and votes of one agent of a scripted trial."""
from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest

from pvsst.experiments.cli import main
from pvsst.sim.llm.prompt_table import check_prompt_table

ROUNDS, AGENTS = 3, 6


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    code = main(["simulate", "--model", "scripted/imitate", "--topic", "ai_labels", "--condition", "likes",
                 "--seed", "101", "--agents", str(AGENTS), "--rounds", str(ROUNDS), "--out", str(out)])
    assert code == 0
    return out


def _trial(run_dir):
    (trial,) = [p for p in (run_dir / "trials").iterdir() if p.is_dir() and not p.name.startswith(".")]
    return trial


def test_stored_prompts_reproduce_every_calls_hash(run_dir):
    trial = _trial(run_dir)
    calls = pd.read_parquet(trial / "llm_calls.parquet")
    prompts = pd.read_parquet(trial / "prompts.parquet")
    assert len(calls) == AGENTS * ROUNDS * 2  # a post and a vote per agent and round
    assert prompts["prompt_sha256"].is_unique and len(prompts) <= len(calls)
    by_key = prompts.set_index("prompt_sha256")
    for key in calls["prompt_sha256"]:
        row = by_key.loc[key]
        # recompute the hash as the gateway does: sha256 of the canonical JSON of the messages
        messages = json.loads(row["messages_json"])
        canonical = json.dumps(messages, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert hashlib.sha256(canonical.encode()).hexdigest() == key
        assert [m["content"] for m in messages if m["role"] == "system"] == [row["system"]]
        assert [m["content"] for m in messages if m["role"] == "user"] == [row["user"]]
    assert check_prompt_table(prompts, calls) == []


def test_check_prompt_table_catches_a_changed_text(run_dir):
    prompts = pd.read_parquet(_trial(run_dir) / "prompts.parquet")
    prompts.loc[0, "messages_json"] = prompts.loc[0, "messages_json"].replace("TOPIC", "T0PIC")
    assert len(check_prompt_table(prompts)) == 1


def test_show_prints_every_round_for_one_agent(run_dir, capsys):
    trial = _trial(run_dir)
    code = main(["show", str(run_dir), trial.name, "--agent", "a01"])
    out = capsys.readouterr().out
    assert code == 0
    posts = pd.read_parquet(trial / "posts.parquet")
    votes = pd.read_parquet(trial / "votes.parquet")
    exposures = pd.read_parquet(trial / "exposures.parquet")
    mine = posts[posts["agent_id"] == "a01"].sort_values("round")
    assert ([line for line in out.splitlines() if line.startswith("round ")]
            == [f"round {r} · a01" for r in range(ROUNDS)])
    for text in mine["text"]:
        assert f'wrote: "{text}"' in out
    # round 0 has no feed; later rounds list each shown post with its slot and like count
    assert out.count("saw:   (no feed)") == 1
    for row in exposures[exposures["viewer_id"] == "a01"].itertuples():
        assert f"{row.position + 1}. @{row.shown_agent_id} [{row.likes_shown} likes]" in out
    for row in votes[votes["voter_id"] == "a01"].itertuples():
        assert f"@{row.target_agent_id} {row.value:+d}" in out or f"@{row.target_agent_id} 0" in out
    assert out.count("voted: ") == ROUNDS


def test_show_round_with_prompts_and_bad_input(run_dir, capsys):
    trial = _trial(run_dir)
    assert main(["show", str(run_dir), trial.name, "--round", "1", "--prompts"]) == 0
    out = capsys.readouterr().out
    assert ([line for line in out.splitlines() if line.startswith("round ")]
            == [f"round 1 · a{i:02d}" for i in range(AGENTS)])
    assert out.count("    | TOPIC: ") == AGENTS
    assert main(["show", str(run_dir), trial.name, "--agent", "zz"]) == 2
    assert "no agent 'zz'" in capsys.readouterr().err
    assert main(["show", str(run_dir), "nope"]) == 2
