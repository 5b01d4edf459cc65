"""The epidemic spec: one YAML file (``schedule: epidemic``) that fixes an epidemic run on a decision bank.

An epidemic run drives the influenza-like model of :mod:`pvsst.sim.epidemic` with the reporting
decisions of a finished scenario survey run (the *bank*): every agent of the survey's census population
(``RUN/cells.parquet``: each cell's personas per state) reports when ill with its cell's probability at
the current local case level. The spec names:

- ``bank``: the survey run folder (relative to the spec file), the question, the scenario factor that
  sets the case level and the bank level of each of its levels, optionally the household factor and
  its levels, and the level every other scenario factor is held at (``fixed``);
- ``population``: the mixing unit (``region``: ``state``, ``census_region`` or ``national``), how many
  agents stand for one persona of the survey population (``agents_per_persona``) and, optionally, the
  household size distribution (``households``: shares of households of 1, 2, ... adults and their source);
- ``epidemic``: the model's parameters (:class:`~pvsst.sim.epidemic.settings.EpidemicSettings`, every
  default with its source);
- ``seed`` (the master seed: the population's households and every replicate's draws come from it) and
  ``replicates`` (independent epidemics on the same population, one run unit each).

It is frozen like a study spec (``pvsst prereg freeze``: the lock covers the spec and every file of the
bank run it reads) and run by ``pvsst run SPEC --out RUN`` (:mod:`pvsst.experiments.epidemic.runner`).

Examples
--------
>>> spec = load_epidemic_spec("epidemic.yaml", {"schedule": "epidemic", "id": "flu", "title": "Flu", "seed": 1,
...     "bank": {"run": "runs/flu", "case_levels": {"none": "0", "many": ">100"}}})
>>> spec.replicates, spec.population.region, spec.epidemic.r0
(1, 'state', 1.28)
>>> load_epidemic_spec("epidemic.yaml", {"schedule": "epidemic", "id": "flu", "title": "Flu", "seed": 1,
...     "bank": {"run": "runs/flu", "case_levels": {"none": "0"}}, "epidemic": {"r0": -1}})
Traceback (most recent call last):
...
pvsst.core.errors.InputError: epidemic.yaml: epidemic.r0: Input should be greater than or equal to 0 (got -1)
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationError, model_validator

from pvsst.core.bounds import MAX_SEED
from pvsst.core.errors import InputError
from pvsst.core.validation import describe_validation_error
from pvsst.core.yaml_file import read_yaml_mapping
from pvsst.experiments.spec.base import Identifier, NonEmptyText, SpecFieldError, StrictModel
from pvsst.experiments.spec.study import canonical_sha256
from pvsst.sim.epidemic.settings import EpidemicSettings
from pvsst.sim.llm.types import canonical_json

EPIDEMIC_SCHEDULE = "epidemic"
"""The ``schedule`` value that makes a spec an epidemic run."""

# The levels of pvsst.sim.epidemic.bank.CASE_LEVELS and HOUSEHOLD_LEVELS, as types the spec validates.
CaseLevel = Literal["0", "<10", "10-100", ">100"]
HouseholdLevel = Literal["none", "member_reported", "member_did_not_report"]


class BankSource(StrictModel):
    """Where the reporting bank comes from: a finished survey run of a scenario instrument.

    Attributes
    ----------
    run : the survey run folder, relative to the spec file.
    question : the question whose first option is the decision (default: the instrument's first).
    case_factor, case_levels : the scenario factor that sets the case level, and each of its levels'
        bank level (``0``, ``<10``, ``10-100``, ``>100``).
    household_factor, household_levels : the factor of the household vignette and its levels' bank
        levels (``none``, ``member_reported``, ``member_did_not_report``); absent: decisions are independent.
    fixed : the level every other scenario factor is held at.
    model, condition : the model and condition whose answers form the bank (needed when the run has several).
    """

    run: NonEmptyText
    question: Identifier | None = None
    case_factor: Identifier = "case_level"
    case_levels: Annotated[dict[str, CaseLevel], Field(min_length=1)]
    household_factor: Identifier | None = None
    household_levels: dict[str, HouseholdLevel] | None = None
    fixed: dict[str, str] = Field(default_factory=dict)
    model: NonEmptyText | None = None
    condition: NonEmptyText | None = None

    @model_validator(mode="after")
    def _household_pair(self) -> BankSource:
        if (self.household_factor is None) != (self.household_levels is None):
            raise SpecFieldError("household_levels", "give household_factor and household_levels together")
        named = {self.case_factor, self.household_factor} & set(self.fixed)
        if named:
            raise SpecFieldError("fixed", f"factor {sorted(named)[0]!r} sets a bank level and cannot be fixed")
        if self.household_factor is not None and self.household_factor == self.case_factor:
            raise SpecFieldError("household_factor", "must differ from case_factor")
        return self


class HouseholdSizeSpec(StrictModel):
    """Shares of households by number of adults (``shares[k-1]``: households of k) and their source."""

    shares: Annotated[list[Annotated[float, Field(ge=0.0)]], Field(min_length=1, max_length=50)]
    source: NonEmptyText

    @model_validator(mode="after")
    def _positive(self) -> HouseholdSizeSpec:
        if sum(self.shares) <= 0:
            raise SpecFieldError("shares", "the shares need a positive sum")
        return self


class PopulationSpec(StrictModel):
    """The epidemic's agents, built from the bank run's census population (its ``cells.parquet``).

    Attributes
    ----------
    region : the mixing unit: the persona's ``state``, its ``census_region`` or one ``national`` region.
    agents_per_persona : agents standing for each persona of the survey population (rounded per cell
        and state).
    households : the household size distribution (absent: every agent lives alone).
    """

    region: Literal["state", "census_region", "national"] = "state"
    agents_per_persona: Annotated[float, Field(gt=0.0, le=1000.0)] = 1.0
    households: HouseholdSizeSpec | None = None


class EpidemicStudySpec(StrictModel):
    """A whole preregistered epidemic run. Load one with :func:`load_epidemic_spec` (module docstring)."""

    spec_version: Literal[1] = 1
    schedule: Literal["epidemic"]
    id: Identifier
    title: NonEmptyText
    description: str = ""
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)]
    replicates: Annotated[int, Field(ge=1, le=1000)] = 1
    bank: BankSource
    population: PopulationSpec = PopulationSpec()
    epidemic: EpidemicSettings = EpidemicSettings()

    def bank_run(self, spec_dir: Path | None) -> Path:
        """The bank's survey run folder, resolved against the spec's folder."""
        path = Path(self.bank.run)
        return path if path.is_absolute() or spec_dir is None else Path(spec_dir) / path


def is_epidemic_document(data: dict) -> bool:
    """Whether a spec read from YAML is an epidemic run (``schedule: epidemic``).

    >>> is_epidemic_document({"schedule": "epidemic"}), is_epidemic_document({"schedule": "threads"})
    (True, False)
    """
    return data.get("schedule") == EPIDEMIC_SCHEDULE


def is_epidemic_spec(path: str | Path) -> bool:
    """Whether the spec file at ``path`` is an epidemic run (an unreadable file is an ``InputError``)."""
    return is_epidemic_document(read_yaml_mapping(path))


def load_epidemic_spec(path: str | Path, data: dict | None = None) -> EpidemicStudySpec:
    """Read and validate an epidemic spec; any problem is an ``InputError`` naming the file and the field.

    Parameters
    ----------
    path : the spec file (YAML, ``schedule: epidemic``).
    data : its mapping, when already read (``path`` then only names it in messages).

    Returns
    -------
    EpidemicStudySpec
    """
    data = read_yaml_mapping(path) if data is None else data
    try:
        return EpidemicStudySpec.model_validate(data)
    except ValidationError as err:
        cause = (err.errors()[0].get("ctx") or {}).get("error")
        if isinstance(cause, InputError):  # the model's parameters validate themselves, naming their field
            raise InputError(str(path), f"epidemic.{cause.field}", cause.problem) from None
        field, problem = describe_validation_error(err, EpidemicStudySpec)
        raise InputError(str(path), field, problem) from None


def canonical_epidemic_spec(spec: EpidemicStudySpec) -> dict:
    """The fully-defaulted, JSON-able, key-sorted form of ``spec``: what :func:`epidemic_spec_sha256` hashes."""
    return json.loads(canonical_json(spec.model_dump(mode="json")))


def epidemic_spec_sha256(spec: EpidemicStudySpec) -> str:
    """sha256 (hex) of the canonical JSON of the canonical epidemic spec."""
    return canonical_sha256(canonical_epidemic_spec(spec))


def epidemic_spec_from_canonical(data: dict) -> EpidemicStudySpec:
    """Rebuild an epidemic spec from its canonical form (as stored in a lock or a manifest)."""
    return EpidemicStudySpec.model_validate_json(canonical_json(data))
