"""The study spec: one YAML file that fixes a whole preregistered experiment before any model is called.

A spec names hypotheses and outcomes, the factors (models x topics x seeds x conditions), how trials
pair into blocks, the push direction of each seed, the trial settings (:mod:`pvsst.experiments.spec.trial`),
the persona source, the analysis plan (:mod:`pvsst.analysis.stats.plan`, the same model the statistics read), a budget,
execution settings
and the run order. Unknown keys and type coercions are errors; cross-field rules (contrast arms must be
run, every seed needs a push direction, stages must cover every trial, ...) are checked here.

The canonical form (:func:`canonical_spec`) is the fully-defaulted spec with built-in topic ids
resolved to their full wording, so the hash covers the exact text agents will read.

Examples
--------
>>> from pvsst.experiments.spec.study import load_spec, spec_sha256
>>> spec = load_spec("experiments/specs/quickstart.yaml")
>>> spec.factors.conditions, len(spec_sha256(spec))
(['control', 'likes'], 64)
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from pvsst.analysis.stats.plan import AnalysisPlan, Hypothesis, Outcomes
from pvsst.core.bounds import MAX_BOOTSTRAP_CELLS, MAX_SEED
from pvsst.core.errors import InputError
from pvsst.core.errors import InputError as SimInputError
from pvsst.core.validation import describe_validation_error, require_unique
from pvsst.core.yaml_file import read_yaml_mapping
from pvsst.experiments.spec.audit_section import AuditSpec
from pvsst.experiments.spec.base import (
    FACTOR_COLUMNS,
    Identifier,
    NonEmptyText,
    SpecFieldError,
    StrictModel,
    first_duplicate,
)
from pvsst.experiments.spec.execution import SURVEY_ONLY_DEFAULTS, Execution, drop_defaults
from pvsst.experiments.spec.identity_injection import StudyIdentityInjectionSpec, unsteerable_model_problem
from pvsst.experiments.spec.protocol_section import ProtocolSpec
from pvsst.experiments.spec.trial import PersonaSpec, check_request_seeds
from pvsst.sim.conditions import CONDITIONS, get_condition
from pvsst.sim.llm.budget import BudgetCap
from pvsst.sim.llm.providers.registry import validate_model_name
from pvsst.sim.llm.types import canonical_json
from pvsst.sim.topics import Topic, builtin_topics
from pvsst.sim.trial.settings import TrialSettings

BLOCK_FACTORS = ("model", "topic_id", "seed")


def model_slug(model: str) -> str:
    """A file-name-safe form of a model string, used in trial and block ids.

    Examples
    --------
    >>> model_slug("ollama/qwen3.5:4b"), model_slug("embedded/smollm2-135m")
    ('ollama-qwen3.5-4b', 'embedded-smollm2-135m')
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-")


def model_name_problem(model: str) -> str | None:
    """Why ``model`` is not a usable model string, or ``None`` (asks the provider registry)."""
    try:
        validate_model_name(model)
    except (SimInputError, ValueError) as err:
        return getattr(err, "problem", None) or str(err)
    return None


class TopicSpec(StrictModel):
    """A debate topic; in YAML either a built-in id (``ai_labels``) or the four fields inline."""

    id: Identifier
    question: NonEmptyText
    support_angle: NonEmptyText
    oppose_angle: NonEmptyText

    def to_topic(self) -> Topic:
        return Topic(self.id, self.question, self.support_angle, self.oppose_angle)


class Factors(StrictModel):
    """The crossed factors: every model x topic x seed x condition is one trial."""

    models: Annotated[list[NonEmptyText], Field(min_length=1)]
    topics: Annotated[list[TopicSpec], Field(min_length=1)]
    seeds: Annotated[list[Annotated[int, Field(ge=0, le=MAX_SEED)]], Field(min_length=1)]
    conditions: Annotated[list[str], Field(min_length=1)]

    @field_validator("topics", mode="before")
    @classmethod
    def _resolve_builtin_topics(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        resolved = []
        for index, entry in enumerate(value):
            if isinstance(entry, str):
                topic = builtin_topics().get(entry)
                if topic is None:
                    raise SpecFieldError(f"[{index}]", f"unknown built-in topic {entry!r} (built-in: "
                                         f"{', '.join(sorted(builtin_topics()))}; or give id, question, "
                                         "support_angle, oppose_angle inline)")
                entry = {"id": topic.id, "question": topic.question, "support_angle": topic.support_angle,
                         "oppose_angle": topic.oppose_angle}
            resolved.append(entry)
        return resolved

    @field_validator("topics")
    @classmethod
    def _unique_topic_ids(cls, value: list[TopicSpec]) -> list[TopicSpec]:
        require_unique([topic.id for topic in value], "topic", suffix=".id")
        return value

    @field_validator("models")
    @classmethod
    def _known_models(cls, value: list[str]) -> list[str]:
        for index, model in enumerate(value):
            problem = model_name_problem(model)
            if problem:
                raise SpecFieldError(f"[{index}]", problem)
        duplicate = first_duplicate([model_slug(model) for model in value])
        if duplicate:
            raise SpecFieldError(f"[{duplicate[0]}]", f"model {value[duplicate[0]]!r} is listed twice (or "
                                 f"differs from another only in punctuation: id {duplicate[1]!r})")
        return value

    @field_validator("seeds")
    @classmethod
    def _unique_seeds(cls, value: list[int]) -> list[int]:
        require_unique(value, "seed", show=str)
        return value

    @field_validator("conditions")
    @classmethod
    def _known_conditions(cls, value: list[str]) -> list[str]:
        for index, name in enumerate(value):
            if name not in CONDITIONS:
                raise SpecFieldError(f"[{index}]", f"unknown condition {name!r} (known: {', '.join(CONDITIONS)})")
        require_unique(value, "condition")
        return value


class BlockSpec(StrictModel):
    """Trials sharing the values of ``block_key`` form one paired block (one trial per arm by default)."""

    block_key: Annotated[list[Literal["model", "topic_id", "seed"]], Field(min_length=1)] = list(BLOCK_FACTORS)

    @field_validator("block_key")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        require_unique(value)
        return value


class PushDirectionSpec(StrictModel):
    """The side adversaries push in each seed's trials (the same in every arm, so blocks stay paired).

    Either ``by_seed`` (``{101: support, 211: oppose, ...}``) or a ``rule``: ``alternate`` gives the
    sorted seeds support, oppose, support, ... (PV-SST: 101, 307 support; 211, 419 oppose).
    """

    by_seed: dict[int, Literal["support", "oppose"]] | None = None
    rule: Literal["alternate", "all_support", "all_oppose"] | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> PushDirectionSpec:
        if (self.by_seed is None) == (self.rule is None):
            raise SpecFieldError("", "give exactly one of by_seed or rule")
        return self

    def resolve(self, seeds: list[int]) -> dict[int, str]:
        """Seed -> ``"support"`` or ``"oppose"``.

        Examples
        --------
        >>> PushDirectionSpec(rule="alternate").resolve([419, 101, 307, 211])
        {101: 'support', 211: 'oppose', 307: 'support', 419: 'oppose'}
        """
        if self.by_seed is not None:
            return {seed: self.by_seed[seed] for seed in sorted(seeds)}
        if self.rule == "alternate":
            return {seed: ("support", "oppose")[i % 2] for i, seed in enumerate(sorted(seeds))}
        side = "support" if self.rule == "all_support" else "oppose"
        return {seed: side for seed in sorted(seeds)}


class Stage(StrictModel):
    """One stage of the run order: the trials of the listed models / topics / seeds (all when omitted)."""

    name: Identifier | None = None
    models: Annotated[list[str], Field(min_length=1)] | None = None
    topics: Annotated[list[str], Field(min_length=1)] | None = None
    seeds: Annotated[list[int], Field(min_length=1)] | None = None

    def matches(self, model: str, topic_id: str, seed: int) -> bool:
        return ((self.models is None or model in self.models) and (self.topics is None or topic_id in self.topics)
                and (self.seeds is None or seed in self.seeds))


class RunOrder(StrictModel):
    """Stages run one after another (a trial belongs to the first stage that matches it); within a stage
    trials are sorted by ``by`` (outermost first; factor values in their listed order). The default
    order, model > topic > seed > condition, is the row order of PV-SST's published table."""

    stages: Annotated[list[Stage], Field(min_length=1)] | None = None
    by: Annotated[list[Literal["model", "topic_id", "seed", "condition"]], Field(min_length=1)] = list(FACTOR_COLUMNS)

    @field_validator("by")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        require_unique(value)
        return value




class StudySpec(StrictModel):
    """A whole preregistered study. Load one with :func:`load_spec`."""

    spec_version: Literal[1] = 1
    id: Identifier
    title: NonEmptyText
    description: str = ""
    hypotheses: Annotated[list[Hypothesis], Field(min_length=1)]
    outcomes: Outcomes
    factors: Factors
    blocks: BlockSpec = BlockSpec()
    push_direction: PushDirectionSpec = PushDirectionSpec(rule="alternate")
    trial: TrialSettings = TrialSettings()
    protocol: ProtocolSpec = ProtocolSpec()
    personas: PersonaSpec = PersonaSpec()
    analysis: AnalysisPlan
    budget: BudgetCap = BudgetCap()
    execution: Execution = Execution()
    run_order: RunOrder = RunOrder()
    # A counterfactual first-round audit of the agents (pvsst.sim.first_round_audit), run after the trials.
    audit: AuditSpec | None = None
    # Each honest agent's identity vectors added to the embedded model's hidden states (PSII).
    identity_injection: StudyIdentityInjectionSpec | None = None

    def topic(self, topic_id: str) -> TopicSpec:
        """The topic called ``topic_id``."""
        return next(topic for topic in self.factors.topics if topic.id == topic_id)

    def push_directions(self) -> dict[int, str]:
        """Seed -> push direction for every seed of the study."""
        return self.push_direction.resolve(self.factors.seeds)

    def n_adversaries(self, condition: str) -> int:
        """Adversary accounts in one trial of ``condition``."""
        return get_condition(condition, self.trial.n_distributed_sources).n_adversaries

    @model_validator(mode="after")
    def _consistent(self) -> StudySpec:
        conditions = self.factors.conditions
        for name, contrast in self.analysis.contrasts.items():
            for arm in ("treatment", "control"):
                if getattr(contrast, arm) not in conditions:
                    raise SpecFieldError(f"analysis.contrasts.{name}.{arm}", f"arm {getattr(contrast, arm)!r} "
                                         f"is not among factors.conditions ({', '.join(conditions)})")
        self._check_hypotheses()
        judge = self.analysis.stance_judge
        if judge is not None and judge != "lexicon":
            problem = model_name_problem(judge)
            if problem:
                raise SpecFieldError("analysis.stance_judge", f"{problem} (a judge is `lexicon` or a model string)")
        self._check_push_direction()
        if self.protocol.initial_stances == "reference" and self.trial.n_agents % 6:
            raise SpecFieldError("trial.n_agents", f"protocol initial_stances 'reference' needs a multiple of 6 "
                                 f"agents, got {self.trial.n_agents}")
        check_request_seeds(self.trial, self.factors.seeds, max(self.n_adversaries(c) for c in conditions))
        if self.personas.n is not None and self.personas.n < self.trial.n_agents:
            raise SpecFieldError("personas.n", f"a pool of {self.personas.n} personas cannot seat "
                                 f"{self.trial.n_agents} agents (trial.n_agents)")
        self._check_stages()
        self._check_audit()
        self._check_bootstrap()
        self._check_identity_injection()
        self.execution.check_models(self.factors.models)
        self.execution.check_study()
        return self

    def _check_hypotheses(self) -> None:
        duplicate = first_duplicate([h.id for h in self.hypotheses])
        if duplicate:
            raise SpecFieldError(f"hypotheses[{duplicate[0]}].id", f"hypothesis id {duplicate[1]!r} used twice")
        outcomes = self.outcomes.primary + self.outcomes.secondary
        for index, hypothesis in enumerate(self.hypotheses):
            where = f"hypotheses[{index}]"
            if hypothesis.contrast not in self.analysis.contrasts:
                raise SpecFieldError(f"{where}.contrast", f"no contrast {hypothesis.contrast!r} in analysis."
                                     f"contrasts ({', '.join(self.analysis.contrasts)})")
            if hypothesis.metric not in outcomes:
                raise SpecFieldError(f"{where}.metric", f"{hypothesis.metric!r} is not listed in outcomes")
            if hypothesis.primary and hypothesis.metric not in self.outcomes.primary:
                raise SpecFieldError(f"{where}.metric", f"a primary hypothesis must test a primary outcome "
                                     f"({hypothesis.metric!r} is secondary)")

    def _check_push_direction(self) -> None:
        by_seed = self.push_direction.by_seed
        if by_seed is None:
            return
        for seed in self.factors.seeds:
            if seed not in by_seed:
                raise SpecFieldError("push_direction.by_seed", f"seed {seed} has no push direction")
        for seed in by_seed:
            if seed not in self.factors.seeds:
                raise SpecFieldError(f"push_direction.by_seed[{seed}]", "seed is not in factors.seeds")

    def _check_bootstrap(self) -> None:
        sizes = {"model": len(self.factors.models), "topic_id": len(self.factors.topics),
                 "seed": len(self.factors.seeds)}
        blocks = 1
        for key in self.blocks.block_key:
            blocks *= sizes[key]
        if self.analysis.bootstrap_draws * blocks > MAX_BOOTSTRAP_CELLS:
            raise SpecFieldError("analysis.bootstrap_draws", f"{self.analysis.bootstrap_draws} draws x {blocks} blocks "
                                 f"exceed the {MAX_BOOTSTRAP_CELLS:,} the bootstrap may hold at once; draw fewer")

    def _check_audit(self) -> None:
        audit = self.audit
        if audit is None:
            return
        if self.personas.source == "default":
            raise SpecFieldError("audit", "needs personas.source census or file: the built-in personas are fixed "
                                 "texts, so no attribute of theirs can be varied")
        pool = self.personas.n or max(1000, self.trial.n_agents)
        if self.personas.source == "census" and pool < audit.matched_sets:
            raise SpecFieldError("audit.matched_sets", f"{audit.matched_sets} matched sets need as many base "
                                 f"personas; the census pool has {pool} (personas.n)")
        # one ordinal per matched set (its members share it) and one per copy of the null
        ordinals = audit.matched_sets * (1 + (audit.n_groups if audit.arity_null else 0))
        if self.trial.request_seed_formula == "pvsst" and ordinals > 500:
            raise SpecFieldError("audit.matched_sets", f"the audit's {ordinals} request seeds per phase exceed the "
                                 "500 the 'pvsst' request-seed formula keeps apart; set trial.request_seed_formula: "
                                 "hashed or audit fewer sets")
        if self.trial.votes_per_voter < 1:
            raise SpecFieldError("audit", "audits first-round votes: trial.votes_per_voter must be at least 1")

    def _check_identity_injection(self) -> None:
        if self.identity_injection is None:
            return
        problem = unsteerable_model_problem(self.factors.models)
        if problem:
            raise SpecFieldError("identity_injection", problem)
        if self.personas.source == "default":
            raise SpecFieldError("identity_injection", "needs personas.source census or file: the built-in "
                                 "personas carry no attributes to inject")
        if self.audit is not None:
            raise SpecFieldError("identity_injection", "a counterfactual audit of steered agents is not supported; "
                                 "drop the audit section or the identity injection")

    def _check_stages(self) -> None:
        stages = self.run_order.stages
        if stages is None:
            return
        known = {"models": self.factors.models, "topics": [t.id for t in self.factors.topics],
                 "seeds": self.factors.seeds}
        for index, stage in enumerate(stages):
            for factor, allowed in known.items():
                for position, value in enumerate(getattr(stage, factor) or []):
                    if value not in allowed:
                        raise SpecFieldError(f"run_order.stages[{index}].{factor}[{position}]",
                                             f"{value!r} is not in factors.{factor}")
        block_stage: dict[tuple, int] = {}
        for model in self.factors.models:
            for topic in known["topics"]:
                for seed in self.factors.seeds:
                    stage = next((i for i, s in enumerate(stages) if s.matches(model, topic, seed)), None)
                    if stage is None:
                        raise SpecFieldError("run_order.stages", f"trials of model {model!r}, topic {topic!r}, "
                                             f"seed {seed} are in no stage")
                    values = {"model": model, "topic_id": topic, "seed": seed}
                    block = tuple(values[key] for key in self.blocks.block_key)
                    if block_stage.setdefault(block, stage) != stage:
                        raise SpecFieldError("run_order.stages", f"block {block} is split across stages "
                                             f"{block_stage[block]} and {stage}; a stage must hold whole blocks")


# --- loading, canonical form, hash -------------------------------------------------------------------


def load_spec(path: str | Path) -> StudySpec:
    """Read and validate a spec file; any problem is an ``InputError`` naming the field (first only).

    Examples
    --------
    >>> load_spec("experiments/specs/pvsst_confirmatory.yaml").trial.n_agents
    12
    """
    data = read_yaml_mapping(path)
    try:
        return StudySpec.model_validate(data)
    except ValidationError as err:
        field, problem = describe_validation_error(err, StudySpec)
        raise InputError(str(path), field, problem) from None


def spec_from_canonical(data: dict) -> StudySpec:
    """Rebuild a spec from its canonical form (as stored in a lock or a run manifest).

    Examples
    --------
    >>> spec = load_spec("experiments/specs/scripted_smoke.yaml")
    >>> spec_from_canonical(canonical_spec(spec)) == spec
    True
    """
    return StudySpec.model_validate_json(canonical_json(data))


def canonical_spec(spec: StudySpec) -> dict:
    """The fully-defaulted, JSON-able, key-sorted form of ``spec``: what :func:`spec_sha256` hashes.

    Examples
    --------
    >>> canonical = canonical_spec(load_spec("experiments/specs/quickstart.yaml"))
    >>> canonical["trial"]["n_agents"], canonical["trial"]["feed_size"], canonical["factors"]["topics"][0]["id"]
    (6, 5, 'ai_labels')
    """
    data = spec.model_dump(mode="json")
    data["execution"] = drop_defaults(data["execution"], SURVEY_ONLY_DEFAULTS)
    if data.get("audit") is None:  # a spec without an audit hashes as it did before audits existed
        data.pop("audit", None)
    if data.get("identity_injection") is None:  # likewise a spec without identity injection
        data.pop("identity_injection", None)
    return json.loads(canonical_json(data))


def spec_sha256(spec: StudySpec) -> str:
    """sha256 (hex) of the canonical JSON of the canonical spec.

    Examples
    --------
    >>> spec = load_spec("experiments/specs/quickstart.yaml")
    >>> spec_sha256(spec) == spec_sha256(spec_from_canonical(canonical_spec(spec)))
    True
    """
    return canonical_sha256(canonical_spec(spec))


def canonical_sha256(canonical: dict) -> str:
    """sha256 (hex) of a spec already in canonical form (as :func:`canonical_spec` returns it)."""
    return hashlib.sha256(canonical_json(canonical).encode("utf-8")).hexdigest()
