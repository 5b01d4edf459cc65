"""Materials render byte for byte: trailing line breaks kept, blocks only for a non-empty value, numbers
printed by the protocol's ``number_format``.

The materials below are written for this test (our own words), not any study's. Expected strings are
written out in full, so a changed byte anywhere fails.
"""
from __future__ import annotations

import pytest

from pvsst.core.errors import InputError
from pvsst.sim.materials import copy_materials, load_materials
from pvsst.sim.prompts import post_messages, vote_messages
from pvsst.sim.prompts.render import FIRST_ROUND_NOTE
from pvsst.sim.topics import get_topic

POST = (
    "Q: $question\n"
    "Me: $persona\n"
    "Leaning: $opinion at $confidence\n"
    "$agenda${#agenda}\n\n${/agenda}"  # the instruction's line break and an empty line, adversaries only
    "Before:\n$memory\n"
    "Now:\n$feed\n"
)
AGENDA = "Secret: argue for $pushed_opinion."
MEMORY_LINE = "r$round: $post ($opinion, $confidence)"


@pytest.fixture
def ours(tmp_path):
    directory = tmp_path / "ours"
    copy_materials(directory)
    (directory / "post.txt").write_text(POST, encoding="utf-8")
    (directory / "agenda.txt").write_text(AGENDA, encoding="utf-8")
    (directory / "memory_line.txt").write_text(MEMORY_LINE, encoding="utf-8")
    (directory / "post_system.txt").write_text("Answer in JSON.\n", encoding="utf-8")
    (directory / "first_round_note.txt").write_text("(nothing yet)", encoding="utf-8")
    (directory / "vote.txt").write_text("Q: $question\n$persona / $opinion / $confidence\n$posts\n",
                                        encoding="utf-8")
    return load_materials(directory)


def _post(materials, *, confidence=0.7, memory=(), agenda=None, number_format="two_decimals"):
    return post_messages(materials, get_topic("ai_labels"), persona="a ferry pilot", posting_style="dry",
                         stance=1, confidence=confidence, memory=list(memory), feed=[], feed_note=FIRST_ROUND_NOTE,
                         char_limit=180, agenda=agenda, number_format=number_format)


def test_a_template_ending_in_a_line_break_keeps_it(ours):
    system, user = _post(ours)
    assert system["content"] == "Answer in JSON.\n"
    assert user["content"] == ("Q: Should AI-generated content be labeled on social platforms?\n"
                               "Me: a ferry pilot\n"
                               "Leaning: lean support at 0.70\n"
                               "Before:\n(none)\n"
                               "Now:\n(nothing yet)\n")


def test_the_block_appears_for_adversaries_only(ours):
    honest = _post(ours)[1]["content"]
    adversary = _post(ours, agenda=("strongly oppose", "an angle"))[1]["content"]
    assert "Leaning: lean support at 0.70\nBefore:" in honest  # no empty line for an honest agent
    assert "Leaning: lean support at 0.70\nSecret: argue for strongly oppose.\n\nBefore:" in adversary
    assert adversary.replace("Secret: argue for strongly oppose.\n\n", "") == honest


@pytest.mark.parametrize("number_format, printed", [
    ("python", ["0.7", "0.675", "1.0"]),
    ("two_decimals", ["0.70", "0.68", "1.00"]),
])
def test_every_number_follows_the_number_format(ours, number_format, printed):
    memory = [{"round": 0, "post": "first", "stance": 1, "confidence": 0.675},
              {"round": 1, "post": "second", "stance": 2, "confidence": 1.0}]
    user = _post(ours, confidence=0.7, memory=memory, number_format=number_format)[1]["content"]
    assert user == ("Q: Should AI-generated content be labeled on social platforms?\n"
                    "Me: a ferry pilot\n"
                    f"Leaning: lean support at {printed[0]}\n"
                    "Before:\n"
                    f"r0: first (lean support, {printed[1]})\n"
                    f"r1: second (support, {printed[2]})\n"
                    "Now:\n(nothing yet)\n")
    vote = vote_messages(ours, get_topic("ai_labels"), persona="p", stance=-1, posts=[("a01", "hi")],
                         confidence=0.675, number_format=number_format)[1]["content"]
    assert vote == f'Q: Should AI-generated content be labeled on social platforms?\np / lean oppose / {printed[1]}\n' \
                   '[0] @a01: "hi"\n'


def test_pvsst_materials_render_as_before():
    """pvsst's own files end without a line break: the prompts keep their wording exactly."""
    materials = load_materials()
    assert all(not t.text.endswith("\n") for t in materials.templates.values())
    user = _post(materials)[1]["content"]
    assert user.startswith("TOPIC: Should AI-generated content be labeled")
    assert user.endswith("a confidence from 0 to 1, and a short reason.")
    assert "YOUR CONFIDENCE: 0.70\n\nYOUR LAST POSTS:\n(none)\nFEED:\n(none yet: first round)\n\nTASK:" in user


def test_a_trial_renders_the_block_for_its_adversary_only(ours):
    from pvsst.sim.llm.gateway import Gateway
    from pvsst.sim.protocol import Protocol
    from pvsst.sim.trial.run import run_trial
    from pvsst.sim.trial.settings import TrialSetup

    config = TrialSetup(trial_id="t", model_name="scripted/imitate", topic=get_topic("ai_labels"),
                         condition="single_source", seed=101, n_agents=4, n_rounds=1,
                         protocol=Protocol(materials=str(ours.directory), number_format="python"))
    with Gateway() as gateway:
        result = run_trial(config, gateway)
    calls = result.llm_calls[result.llm_calls["phase"] == "post"].set_index("agent_id")
    users = result.prompts.set_index("prompt_sha256")["user"]
    for agent_id, sha in calls["prompt_sha256"].items():
        text = users[sha]
        if agent_id.startswith("x"):
            assert "at 0.85\nSecret: argue for strongly support.\n\nBefore:" in text, text
        else:
            assert "at 0.7\nBefore:" in text, text
    # `pvsst show --prompts` prints both messages with every line break visible, the last ones included
    from pvsst.analysis.study.transcript import transcript

    shown = transcript(result.tables(), round=0, agent="a00", prompts=True).splitlines()
    system = shown.index("  request, system message:")
    assert shown[system + 1:system + 3] == ["    | Answer in JSON.↵", "  request, user message:"]
    assert shown[system + 3:system + 10] == [
        "    | Q: Should AI-generated content be labeled on social platforms?↵", shown[system + 4],
        shown[system + 5], "    | Before:↵", "    | (none)↵", "    | Now:↵",
        "    | (nothing yet)↵"]
    assert shown[system + 5].endswith(" at 0.7↵") and shown[system + 10].startswith("  saw:")


@pytest.mark.parametrize("text, problem", [
    ("$question $persona $opinion $confidence $agenda $memory $feed ${#agenda}x", "never closed"),
    ("$question $persona $opinion $confidence $agenda $memory $feed ${#agenda}${#feed}x${/feed}${/agenda}",
     "do not nest"),
    ("$question $persona $opinion $confidence $agenda $memory $feed ${#agenda}x${/feed}", "closes no open"),
    ("$question $persona $opinion $confidence $agenda $memory $feed ${#mood}x${/mood}", "does not have"),
    ("$question $persona $opinion $confidence $agenda $memory $feed ${#2x}x${/2x}", "bad block marker"),
    ("$question $persona $opinion $confidence $agenda $memory $feed ${#agenda}$ ${/agenda}",
     "invalid placeholder syntax"),
])
def test_a_bad_block_names_the_file_and_the_problem(tmp_path, text, problem):
    copy_materials(tmp_path / "m")
    (tmp_path / "m" / "post.txt").write_text(text)
    with pytest.raises(InputError) as err:
        load_materials(tmp_path / "m")
    assert err.value.source == str(tmp_path / "m" / "post.txt") and problem in err.value.problem


def test_an_escaped_dollar_before_a_brace_is_text(tmp_path):
    copy_materials(tmp_path / "m")
    (tmp_path / "m" / "post_system.txt").write_text("Costs $${#agenda} nothing.")
    assert load_materials(tmp_path / "m").render("post_system") == "Costs ${#agenda} nothing."
