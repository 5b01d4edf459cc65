"""Thread and attribute-judge templates are materials: a user's set is rendered byte for byte, a partial
or malformed set is refused with the file named."""
from __future__ import annotations

from pathlib import Path

import pytest
from thread_helpers import TOPICS, census_personas

from pvsst.core.errors import InputError
from pvsst.sim.judges.attribute_judge import AttributeJudge, AuthorTexts, load_attribute_judge_materials
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.materials.catalog import ATTRIBUTE_JUDGE_FILES, THREAD_FILES
from pvsst.sim.materials.load import default_materials_dir
from pvsst.sim.threads.plan import plan_threads
from pvsst.sim.threads.prompts import PathNode, comment_messages, load_thread_materials
from pvsst.sim.threads.run import run_thread
from pvsst.sim.threads.settings import ThreadSettings
from pvsst.sim.topics import get_topic

# Another study's wording, with characters a careless renderer would change: trailing spaces, a tab, CRLF, a
# final line break, a literal $ and non-ASCII text.
USER_TEMPLATES = {
    "thread_post_system.txt": "You post on a forum.  \r\n",
    "thread_post.txt": "Subject: $question\r\nProfile:\t$persona\r\n${#profile}$profile\r\n"
                       "${/profile}Write the post (costs $$0).\n",
    "thread_comment_system.txt": "Sei un utente del forum. ",
    "thread_comment.txt": "Q=$question|P=$persona|$path|$min_words-$max_words words"
                          "${#critic_note}|$critic_note${/critic_note}\n",
    "thread_path_item.txt": "<$depth> $author: $text",
    "thread_critic_note.txt": "disagree – strongly",
    "thread_profile_line.txt": "* $attribute = $value",
    "thread_vote_system.txt": "vote",
    "thread_vote.txt": "$question $persona\n$comments",
    "thread_vote_item.txt": "$index) $text",
}


def user_materials(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in USER_TEMPLATES.items():
        (directory / name).write_bytes(text.encode())
    return directory


def test_pvsst_ships_every_thread_and_attribute_judge_template():
    shipped = {p.name for p in default_materials_dir().iterdir()}
    assert set(THREAD_FILES) | set(ATTRIBUTE_JUDGE_FILES) <= shipped
    assert load_thread_materials().source == "pvsst" and load_attribute_judge_materials().source == "pvsst"


def test_a_users_thread_templates_are_rendered_byte_for_byte(tmp_path):
    materials = load_thread_materials(user_materials(tmp_path / "m"))
    persona = {"persona_id": "p2", "card": "ünïcode card", "posting_style": "terse", "sex": "female"}
    path = [PathNode("p1", 'the "post"', 0), PathNode("p3", "a reply", 1)]
    system, user = comment_messages(materials, get_topic("ai_labels"), persona, path, min_words=1, max_words=10,
                                    critic=True)
    assert system["content"] == "Sei un utente del forum. "
    assert user["content"] == ("Q=Should AI-generated content be labeled on social platforms?|P=ünïcode card|"
                               '<0> p1: the \\"post\\"\n<1> p3: a reply|1-10 words|disagree – strongly\n')
    assert materials.hashes.keys() == THREAD_FILES.keys()


def test_a_thread_on_user_materials_sends_the_users_wording(tmp_path):
    directory = user_materials(tmp_path / "m")
    settings = ThreadSettings(engaged_profiles=4)
    plan = plan_threads(settings, census_personas(45), TOPICS, seed=3, model_name="scripted/thread_commenter",
                        materials=str(directory))[0]
    with Gateway() as gateway:
        result = run_thread(plan, gateway)
    post = result.prompts.set_index("prompt_sha256").loc[result.comments.loc[0, "prompt_sha256"]]
    assert post["system"] == "You post on a forum.  \r\n"
    assert post["user"].startswith(f"Subject: {plan.topic.question}\r\nProfile:\t{plan.author['card']}\r\n* age = ")
    assert post["user"].endswith("Write the post (costs $0).\n")


@pytest.mark.parametrize("loader, files, noun", [(load_thread_materials, THREAD_FILES, "thread"),
                                                 (load_attribute_judge_materials, ATTRIBUTE_JUDGE_FILES,
                                                  "attribute judge")])
def test_a_partial_set_is_refused_naming_the_missing_file(tmp_path, loader, files, noun):
    first = sorted(files)[0]
    (tmp_path / first).write_text((default_materials_dir() / first).read_text())
    with pytest.raises(InputError) as caught:
        loader(tmp_path)
    missing = sorted(files)[1]
    assert str(caught.value).startswith(f"{tmp_path / missing}: {noun} materials: missing (")
    assert f"give all {len(files)} {noun} templates or none" in str(caught.value)


def test_a_template_without_a_required_placeholder_is_refused(tmp_path):
    directory = user_materials(tmp_path / "m")
    (directory / "thread_comment.txt").write_text("Q=$question|P=$persona|$path")
    with pytest.raises(InputError, match=r"thread_comment.txt: \$min_words: required placeholder missing"):
        load_thread_materials(directory)
    (directory / "thread_comment.txt").write_text("$question $persona $path $min_words $max_words $stance")
    with pytest.raises(InputError, match=r"thread_comment.txt: \$stance: unknown placeholder"):
        load_thread_materials(directory)


def test_the_attribute_judge_renders_a_users_wording(tmp_path):
    for name, text in {"attribute_judge_system.txt": "Guess.", "attribute_judge.txt": "$comments\n--\n$attributes",
                       "attribute_judge_comment.txt": "#$index $text",
                       "attribute_judge_item.txt": "$attribute${#options} in [$options]${/options}"}.items():
        (tmp_path / name).write_text(text)
    judge = AttributeJudge("scripted/attribute_reader", None, load_attribute_judge_materials(tmp_path))
    system, user = judge.messages(AuthorTexts("p1", ("hello", "I am 41 years old."), ("age", "sex")))
    assert system["content"] == "Guess."
    assert user["content"] == '#0 hello\n#1 I am 41 years old.\n--\nage\nsex in ["male", "female"]'
