"""The files of a study-materials directory: what each holds and which placeholders it may use.

A materials directory holds the wording of every prompt (``string.Template`` text files), the honest and
adversary persona tables and the account id scheme. Each template declares the placeholders it *must*
use (so a template cannot silently drop what the prompt is for) and those it *may* use; any other
``$name`` is an error naming the file.

Examples
--------
>>> TEMPLATES["vote"].required
('question', 'persona', 'opinion', 'posts')
>>> sorted(MATERIAL_FILES)[:3]
['accounts.yaml', 'adversary_note.txt', 'adversary_personas.csv']
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TemplateFile:
    """One template of a materials directory: what it is and its placeholders."""

    description: str
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()

    @property
    def allowed(self) -> tuple[str, ...]:
        return self.required + self.optional


TEMPLATES: dict[str, TemplateFile] = {
    "post_system": TemplateFile("system message of a post request"),
    "post": TemplateFile(
        "user message of a post request: the topic, who the agent is, its stance, memory and feed, the task",
        required=("question", "persona", "opinion", "confidence", "agenda", "memory", "feed"),
        optional=("posting_style", "char_limit", "choices")),
    "vote_system": TemplateFile("system message of a vote request"),
    "vote": TemplateFile(
        "user message of a vote request: the topic, who the agent is, its stance, the numbered posts",
        required=("question", "persona", "opinion", "posts"), optional=("n_posts", "confidence", "choices")),
    "agenda": TemplateFile(
        "adversary instruction, put into an adversary's post prompt at $agenda (honest agents: empty)",
        required=("pushed_opinion",), optional=("angle",)),
    "feed_header_ranked": TemplateFile("first line of a feed whose items show like counts"),
    "feed_header": TemplateFile("first line of a feed whose items show no like counts"),
    "feed_item_ranked": TemplateFile("one feed line with its like count",
                                     required=("text",), optional=("likes", "agent_id", "label")),
    "feed_item": TemplateFile("one feed line without a like count",
                              required=("text",), optional=("agent_id", "label")),
    "vote_item": TemplateFile("one numbered post of a vote request", required=("text",),
                              optional=("index", "agent_id", "label")),
    "memory_line": TemplateFile("one of the agent's own earlier posts, in its memory block",
                                required=("post",), optional=("round", "opinion", "confidence")),
    "memory_empty": TemplateFile("the memory block before the agent has posted"),
    "first_round_note": TemplateFile("the feed block in round 0, when nobody has posted"),
    "control_note": TemplateFile("the feed block of the control arm (no feed)"),
    "adversary_note": TemplateFile("the feed block of an adversary account (it sees no posts)"),
    "empty_feed_note": TemplateFile("the feed block when a feed policy returns no posts"),
}
"""Template kind -> its file ``<kind>.txt`` in a materials directory."""

PERSONA_FILES = {"honest_personas": "honest_personas.csv", "adversary_personas": "adversary_personas.csv"}
ACCOUNTS_FILE = "accounts.yaml"
ACCOUNT_ROLES = ("honest", "single_source", "distributed_sources")

MATERIAL_FILES: dict[str, str] = {
    **{f"{kind}.txt": spec.description for kind, spec in TEMPLATES.items()},
    "honest_personas.csv": "honest persona table: persona_id, label, posting_style (card and attributes optional)",
    "adversary_personas.csv": "adversary blend-in personas: persona_id, label, posting_style",
    ACCOUNTS_FILE: "account id formats: honest, single_source, distributed_sources",
}
"""Every file a materials directory must hold, with what it holds; all of them are hashed into the lock."""

JUDGE_TEMPLATES: dict[str, TemplateFile] = {
    "judge_system": TemplateFile("system message of a stance-judge request"),
    "judge": TemplateFile("user message of a stance-judge request: the topic, one post, the seven stance labels",
                          required=("question", "post"), optional=("choices",)),
}
"""The stance judge's templates (``<kind>.txt``): shipped with pvsst's materials; a study's materials
directory may hold its own pair (both files), used by ``pvsst judge`` instead."""
JUDGE_FILES: dict[str, str] = {f"{kind}.txt": spec.description for kind, spec in JUDGE_TEMPLATES.items()}

THREAD_TEMPLATES: dict[str, TemplateFile] = {
    "thread_post_system": TemplateFile("system message of a thread's opening-post request"),
    "thread_post": TemplateFile(
        "user message of a thread's opening-post request: the topic, who the author is, the task",
        required=("question", "persona"), optional=("profile", "posting_style")),
    "thread_comment_system": TemplateFile("system message of a comment request"),
    "thread_comment": TemplateFile(
        "user message of a comment request: the topic, who the persona is, the path from the post to the "
        "comment replied to, the length asked for, the critic note",
        required=("question", "persona", "path", "min_words", "max_words"),
        optional=("profile", "posting_style", "critic_note", "depth")),
    "thread_path_item": TemplateFile("one node of the path shown in a comment request (the post first)",
                                     required=("text",), optional=("author", "depth", "indent", "you")),
    "thread_critic_note": TemplateFile("the instruction put at $critic_note for a critic (others: empty)"),
    "thread_profile_line": TemplateFile("one attribute line of a persona's profile block",
                                        required=("value",), optional=("attribute",)),
    "thread_vote_system": TemplateFile("system message of a comment-vote request"),
    "thread_vote": TemplateFile(
        "user message of a comment-vote request: the topic, who the persona is, the numbered comments",
        required=("question", "persona", "comments"), optional=("profile", "posting_style", "n_comments")),
    "thread_vote_item": TemplateFile("one numbered comment of a vote request", required=("text",),
                                     optional=("index", "author")),
}
"""The thread schedule's templates (``<kind>.txt``): pvsst ships its own; a study's materials directory may
hold its own set (every file, or none), used instead."""
THREAD_FILES: dict[str, str] = {f"{kind}.txt": spec.description for kind, spec in THREAD_TEMPLATES.items()}

ATTRIBUTE_JUDGE_TEMPLATES: dict[str, TemplateFile] = {
    "attribute_judge_system": TemplateFile("system message of an attribute-inference request"),
    "attribute_judge": TemplateFile(
        "user message of an attribute-inference request: one author's comments and the attributes to guess",
        required=("comments", "attributes"), optional=("n_comments",)),
    "attribute_judge_comment": TemplateFile("one comment of the author, in the attribute-inference request",
                                            required=("text",), optional=("index",)),
    "attribute_judge_item": TemplateFile("one attribute to guess, with its options",
                                         required=("attribute",), optional=("question", "options")),
}
"""The attribute judge's templates: pvsst ships its own; a directory may hold its own set (all or none)."""
ATTRIBUTE_JUDGE_FILES: dict[str, str] = {f"{kind}.txt": spec.description
                                         for kind, spec in ATTRIBUTE_JUDGE_TEMPLATES.items()}
