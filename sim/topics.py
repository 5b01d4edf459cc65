"""Topics: a question with a support angle and an oppose angle (PV-SST's four ship with pvsst).

Examples
--------
>>> from pvsst.sim.topics import builtin_topics
>>> sorted(builtin_topics())[:2]
['ai_labels', 'chronological_default']
>>> builtin_topics()["ai_labels"].question
'Should AI-generated content be labeled on social platforms?'
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from pvsst.core.errors import InputError
from pvsst.core.validation import first_duplicate
from pvsst.core.yaml_file import read_yaml_file

TOPIC_FIELDS = ("id", "question", "support_angle", "oppose_angle")


@dataclass(frozen=True)
class Topic:
    """A debate topic: ``question`` plus one sentence arguing each side."""

    id: str
    question: str
    support_angle: str
    oppose_angle: str


def parse_topics(entries: object, source: str) -> list[Topic]:
    """Validate a list of topic mappings (as read from YAML) into :class:`Topic` objects."""
    if not isinstance(entries, list) or not entries:
        raise InputError(source, "topics", "must be a non-empty list of topics")
    topics = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise InputError(source, f"topics[{i}]", "must be a mapping with " + ", ".join(TOPIC_FIELDS))
        unknown = set(entry) - set(TOPIC_FIELDS)
        if unknown:
            raise InputError(source, f"topics[{i}].{sorted(unknown)[0]}", "unknown key")
        for key in TOPIC_FIELDS:
            value = entry.get(key)
            if not isinstance(value, str) or not value.strip():
                raise InputError(source, f"topics[{i}].{key}", "missing or empty text")
        topics.append(Topic(**{k: entry[k].strip() for k in TOPIC_FIELDS}))
    duplicate = first_duplicate([entry["id"] for entry in entries])
    if duplicate:
        raise InputError(source, f"topics[{duplicate[0]}].id", f"duplicate topic id {duplicate[1]!r}")
    return topics


def load_topic_file(path: str | Path) -> list[Topic]:
    """Read topics from a YAML file holding ``topics: [{id, question, support_angle, oppose_angle}, ...]``."""
    path = Path(path)
    data = read_yaml_file(path, "topics")
    entries = data.get("topics") if isinstance(data, dict) else data
    return parse_topics(entries, str(path))


@lru_cache(maxsize=1)
def builtin_topics() -> dict[str, Topic]:
    """The topics shipped with pvsst (PV-SST's four), by id."""
    text = resources.files("pvsst.sim.data").joinpath("topics.yaml").read_text(encoding="utf-8")
    return {t.id: t for t in parse_topics(yaml.safe_load(text)["topics"], "sim/data/topics.yaml")}


def get_topic(topic_id: str) -> Topic:
    """A built-in topic by id; an unknown id is an :class:`InputError`."""
    topics = builtin_topics()
    if topic_id not in topics:
        raise InputError("topic", topic_id, f"unknown topic (built-in: {', '.join(sorted(topics))})")
    return topics[topic_id]
