"""The reporting bank of an epidemic spec, read from the finished scenario survey run it names.

:func:`bank_input_files` lists every file of the survey run that an epidemic run reads (the lock
fingerprints each, so a changed bank is refused like a changed spec); :func:`open_bank` reads them
once and returns the bank table (:func:`pvsst.analysis.scenarios.bank_table.reporting_bank_table`)
and the survey's census population by cell and state (``cells.parquet``). Any problem is an
``InputError`` naming the spec file and the ``bank`` field.

Examples
--------
>>> from pvsst.experiments.spec.epidemic_study import load_epidemic_spec
>>> spec = load_epidemic_spec("flu.yaml", {"schedule": "epidemic", "id": "flu", "title": "Flu", "seed": 1,
...                                        "bank": {"run": "no/such/run", "case_levels": {"none": "0"}}})
>>> try:
...     bank_input_files(spec, "flu.yaml")
... except InputError as err:
...     print(err)
flu.yaml: bank.run: no/such/run is not a survey run folder (no survey.json)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pvsst.analysis.scenarios.bank_table import reporting_bank_table
from pvsst.analysis.scenarios.decisions import decision_table
from pvsst.analysis.store.reader import read_survey_run
from pvsst.core.errors import InputError
from pvsst.core.input_files import file_sha256, read_json
from pvsst.core.integrity import complete_unit_dirs
from pvsst.core.run_layout import CELLS, MANIFEST, PERSONAS, SCENARIOS, SURVEY, UNITS, table_file
from pvsst.experiments.spec.epidemic_study import EpidemicStudySpec

FILE_KEY = "bank.run/"
"""Prefix of the lock's keys for the bank run's files (``bank.run/cells.parquet``, ...)."""


@dataclass(frozen=True)
class BankInput:
    """What an epidemic run reads from its bank run: the bank table and the census population by cell and state."""

    table: pd.DataFrame
    cells: pd.DataFrame


def bank_input_files(spec: EpidemicStudySpec, spec_path: str | Path) -> dict[str, Path]:
    """Every file of the bank run an epidemic run reads, by lock key; refuse a folder that is not a
    finished scenario survey run."""
    run = spec.bank_run(Path(spec_path).parent)
    if not (run / SURVEY).is_file():
        raise InputError(str(spec_path), "bank.run", f"{spec.bank.run} is not a survey run folder (no {SURVEY})")
    manifest = read_json(run / MANIFEST, "manifest") if (run / MANIFEST).is_file() else {}
    if not manifest.get("finished_at"):
        raise InputError(str(spec_path), "bank.run", f"the survey run {spec.bank.run} is not finished (resume it "
                                                     "with `pvsst survey run` first)")
    for name in (SCENARIOS, CELLS):
        if not (run / name).is_file():
            raise InputError(str(spec_path), "bank.run", f"{spec.bank.run} has no {name} (the bank needs a "
                                                         "scenario instrument answered through cells)")
    files = {name: run / name for name in (MANIFEST, SURVEY, PERSONAS, CELLS, SCENARIOS)}
    for unit in complete_unit_dirs(run, UNITS):
        files[f"{UNITS}/{unit.name}/{table_file('responses')}"] = unit / table_file("responses")
    return {FILE_KEY + name: path for name, path in files.items()}


def bank_input_hashes(files: dict[str, Path]) -> dict[str, str]:
    """sha256 of each file of :func:`bank_input_files`, by the same keys."""
    return {key: file_sha256(path) for key, path in files.items()}


def _bank_field(err: InputError, spec: EpidemicStudySpec) -> str:
    """The spec field an error of the bank table is about."""
    if err.field == spec.bank.case_factor:
        return "bank.case_levels"
    if err.field == spec.bank.household_factor:
        return "bank.household_levels"
    if err.field in spec.bank.fixed:
        return "bank.fixed"
    return "bank"


def open_bank(spec: EpidemicStudySpec, spec_path: str | Path) -> BankInput:
    """The bank table and the census population by cell and state (module docstring)."""
    bank_input_files(spec, spec_path)
    run = read_survey_run(spec.bank_run(Path(spec_path).parent), ("responses",))
    instrument = run.instrument.get("spec") or {}
    questions = [q["id"] for q in instrument.get("questions", [])]
    question = spec.bank.question or (questions[0] if questions else "")
    if question not in questions:
        raise InputError(str(spec_path), "bank.question", f"no question {question!r} in the bank run "
                                                          f"(questions: {', '.join(questions)})")
    factors = [c for c in pd.read_parquet(run.path / SCENARIOS).columns if c not in ("scenario", "vignette")]
    try:
        table = decision_table(run.responses, run.personas, instrument, question)
        for column in ("model", "condition"):
            chosen = getattr(spec.bank, column)
            if chosen is not None:
                if chosen not in set(table[column].astype(str)):
                    raise InputError(str(spec_path), f"bank.{column}", f"no answers of {column} {chosen!r} in the "
                                     f"bank run ({', '.join(sorted(set(table[column].astype(str))))})")
                table = table[table[column].astype(str) == chosen]
        bank = reporting_bank_table(table, spec.bank.case_factor, spec.bank.case_levels, spec.bank.household_factor,
                                    spec.bank.household_levels, spec.bank.fixed, scenario_factors=factors)
    except InputError as err:
        if err.source == str(spec_path):
            raise
        raise InputError(str(spec_path), _bank_field(err, spec), f"{err.field}: {err.problem}") from None
    return BankInput(table=bank, cells=run.cells)
