"""The thread study spec: one YAML file (``schedule: threads``) that fixes a whole thread study before any call.

A thread study runs SynthPAI's engagement model (:mod:`pvsst.sim.threads`) instead of the peer-voted
feed: ``threads`` holds every parameter of the procedure (:class:`~pvsst.sim.threads.settings.ThreadSettings`,
defaults SynthPAI's values), ``model`` writes every post and comment, ``topics`` are the seed posts'
topics and ``seed`` is the master seed every draw comes from (authors, topics, engaged personas,
critics, actions, parents). ``personas`` is the persona source of a study spec; a census pool holds, by
default, just enough personas for the threads' authors and engaged personas. ``materials`` is a
directory of thread templates (relative to the spec file; absent: pvsst's).

It is frozen like a study spec (``pvsst prereg freeze``: the lock covers the spec, the materials and
the persona file) and run by ``pvsst run`` (:mod:`pvsst.experiments.threads.runner`).

Examples
--------
>>> spec = load_thread_spec("experiments/specs/threads_scripted.yaml")
>>> spec.schedule, spec.threads.n_threads, spec.threads.engaged_profiles, spec.threads.max_depth
('threads', 5, 40, 5)
>>> is_thread_document({"schedule": "threads"}), is_thread_document({"factors": {}})
(True, False)
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from pvsst.core.bounds import MAX_SEED
from pvsst.core.defaults import FAILURE_THRESHOLD
from pvsst.core.errors import InputError
from pvsst.core.input_files import file_sha256, regular_file
from pvsst.core.validation import Share, describe_validation_error, require_unique
from pvsst.core.yaml_file import read_yaml_mapping
from pvsst.experiments.spec.base import Identifier, NonEmptyText, SpecFieldError, StrictModel
from pvsst.experiments.spec.execution import SURVEY_ONLY_DEFAULTS, Execution, drop_defaults
from pvsst.experiments.spec.study import Factors, TopicSpec, canonical_sha256, model_name_problem
from pvsst.experiments.spec.trial import PersonaSpec
from pvsst.sim.llm.budget import BudgetCap
from pvsst.sim.llm.types import canonical_json
from pvsst.sim.persona_table import load_persona_table
from pvsst.sim.threads.prompts import load_thread_materials
from pvsst.sim.threads.settings import ThreadSettings

THREAD_SCHEDULE = "threads"
"""The ``schedule`` value that makes a spec a thread study."""


def is_thread_document(data: dict) -> bool:
    """Whether a spec read from YAML is a thread study (``schedule: threads``)."""
    return data.get("schedule") == THREAD_SCHEDULE


def is_thread_spec(path: str | Path) -> bool:
    """Whether the spec file at ``path`` is a thread study (an unreadable file is an ``InputError``)."""
    return is_thread_document(read_yaml_mapping(path))


class ThreadStudySpec(StrictModel):
    """A whole preregistered thread study. Load one with :func:`load_thread_spec`.

    Attributes
    ----------
    schedule : ``threads``.
    model : the model string every post and comment is asked of (``scripted/thread_commenter``, ...).
    topics : the seed posts' topics (built-in ids or inline topics); thread ``t`` draws one.
    seed : the master seed.
    threads : every parameter of the thread procedure.
    personas : the persona source; a census pool of ``n`` (default: ``n_threads + engaged_profiles``).
    materials : a directory of thread templates, relative to the spec file (absent: pvsst's).
    max_attempts : tries of a failed call; parse_failure_threshold : the share of failed calls above
        which a thread is degraded.
    """

    spec_version: Literal[1] = 1
    schedule: Literal["threads"]
    id: Identifier
    title: NonEmptyText
    description: str = ""
    model: NonEmptyText
    topics: Annotated[list[TopicSpec], Field(min_length=1)]
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)]
    threads: ThreadSettings = ThreadSettings()
    personas: PersonaSpec = PersonaSpec(source="census")
    materials: NonEmptyText | None = None
    max_attempts: Annotated[int, Field(ge=1, le=10)] = 3
    parse_failure_threshold: Share = FAILURE_THRESHOLD
    budget: BudgetCap = BudgetCap()
    execution: Execution = Execution()

    @field_validator("topics", mode="before")
    @classmethod
    def _builtin_topics(cls, value: Any) -> Any:
        return Factors._resolve_builtin_topics(value)

    @field_validator("topics")
    @classmethod
    def _unique_topics(cls, value: list[TopicSpec]) -> list[TopicSpec]:
        require_unique([topic.id for topic in value], "topic", suffix=".id")
        return value

    @field_validator("model")
    @classmethod
    def _known_model(cls, value: str) -> str:
        problem = model_name_problem(value)
        if problem:
            raise SpecFieldError("", problem)
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ThreadStudySpec:
        self.execution.check_study()
        needed = self.threads.n_threads + self.threads.engaged_profiles
        if self.personas.source == "census" and self.personas.n is not None and self.personas.n < needed:
            raise SpecFieldError("personas.n", f"{self.threads.n_threads} thread author(s) and "
                                 f"{self.threads.engaged_profiles} engaged personas per thread need at least "
                                 f"{needed} personas, got {self.personas.n}")
        if self.personas.source == "default" and len(load_persona_table()) < needed:
            raise SpecFieldError("threads.engaged_profiles", f"{self.threads.engaged_profiles} engaged personas "
                                 f"per thread and {self.threads.n_threads} author(s) need at least {needed} "
                                 f"personas, the built-in table has {len(load_persona_table())}")
        return self

    @property
    def census_size(self) -> int:
        """The census pool's size: ``personas.n``, or just enough for the authors and the engaged personas."""
        return self.personas.n or self.threads.n_threads + self.threads.engaged_profiles

    def topic_list(self):
        """The topics as the engine's :class:`~pvsst.sim.topics.Topic` values."""
        return [topic.to_topic() for topic in self.topics]


def load_thread_spec(path: str | Path, data: dict | None = None) -> ThreadStudySpec:
    """Read and validate a thread study spec; any problem is an ``InputError`` naming the field.

    Parameters
    ----------
    path : the spec file (YAML, ``schedule: threads``).
    data : its mapping, when already read (``path`` then only names it in messages).

    Returns
    -------
    ThreadStudySpec

    Examples
    --------
    >>> load_thread_spec("experiments/specs/threads_scripted.yaml").model
    'scripted/thread_commenter'
    >>> load_thread_spec("x.yaml", {"schedule": "threads", "id": "x", "title": "x", "seed": 1,
    ...                             "model": "scripted/thread_commenter", "topics": ["ai_labels"],
    ...                             "threads": {"max_depth": 0}})
    Traceback (most recent call last):
    ...
    pvsst.core.errors.InputError: x.yaml: threads.max_depth: Input should be greater than or equal to 1 (got 0)
    """
    data = read_yaml_mapping(path) if data is None else data
    try:
        return ThreadStudySpec.model_validate(data)
    except ValidationError as err:
        field, problem = describe_validation_error(err, ThreadStudySpec)
        raise InputError(str(path), field, problem) from None


def thread_spec_from_canonical(data: dict) -> ThreadStudySpec:
    """Rebuild a thread spec from its canonical form (as stored in a lock, a manifest or a worker's task).

    >>> spec = load_thread_spec("experiments/specs/threads_scripted.yaml")
    >>> thread_spec_from_canonical(canonical_thread_spec(spec)) == spec
    True
    """
    return ThreadStudySpec.model_validate_json(canonical_json(data))


def canonical_thread_spec(spec: ThreadStudySpec) -> dict:
    """The fully-defaulted, JSON-able, key-sorted form of ``spec``: what :func:`thread_spec_sha256` hashes."""
    data = spec.model_dump(mode="json")
    data["execution"] = drop_defaults(data["execution"], SURVEY_ONLY_DEFAULTS)
    return json.loads(canonical_json(data))


def thread_spec_sha256(spec: ThreadStudySpec) -> str:
    """sha256 (hex) of the canonical JSON of the canonical thread spec."""
    return canonical_sha256(canonical_thread_spec(spec))


def thread_materials_dir(spec: ThreadStudySpec, spec_dir: Path | None = None) -> Path | None:
    """The spec's thread-template directory, relative to ``spec_dir`` (``None``: pvsst's templates)."""
    if spec.materials is None:
        return None
    path = Path(spec.materials)
    return (path if path.is_absolute() or spec_dir is None else Path(spec_dir) / path).resolve()


def thread_input_files(spec: ThreadStudySpec, spec_dir: Path | None = None) -> dict[str, Path]:
    """The files a run reads besides the spec and its templates, by the field naming them (the persona file)."""
    if spec.personas.source != "file":
        return {}
    path = Path(spec.personas.path)
    return {"personas.path": path if path.is_absolute() or spec_dir is None else Path(spec_dir) / path}


def thread_files_hashes(spec: ThreadStudySpec, spec_dir: Path | None = None) -> dict[str, str]:
    """sha256 of every file a run reads besides the spec: the thread templates it renders (by file name)
    and the persona file (by field); a missing or malformed file is an ``InputError`` naming it.

    >>> spec = load_thread_spec("experiments/specs/threads_scripted.yaml")
    >>> sorted(thread_files_hashes(spec))[:2]
    ['thread_comment.txt', 'thread_comment_system.txt']
    """
    hashes = dict(load_thread_materials(thread_materials_dir(spec, spec_dir)).hashes)
    for field, path in thread_input_files(spec, spec_dir).items():
        hashes[field] = file_sha256(regular_file(path, field))
    return hashes
