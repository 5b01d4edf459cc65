"""The run-store layout: every file and folder name of a run directory, for its writer and its readers.

``pvsst run`` and ``pvsst survey run`` write a run directory (the run kernel,
:mod:`pvsst.experiments.run.kernel`, is its only writer); ``pvsst analyze``, ``pvsst report`` and
:func:`pvsst.open_run` read it. Both sides take the names from here (docs/run-store.md describes them)::

    RUN/manifest.json        what was run, from which frozen input, and how each unit ended
    RUN/cache.sqlite         the response cache (a resumed run replays its finished calls)
    RUN/materials/           a study's prompt materials, as the run used them
    RUN/personas.parquet     the personas of the run (a census pool, or a survey's personas asked)
    RUN/trials/<trial_id>/   a study trial: TRIAL_TABLES as Parquet, metrics.json, DONE
    RUN/audits/<unit_id>/    a study's first-round audit of one model x topic: AUDIT_TABLES, DONE
    RUN/survey.json          a survey run's effective instrument and its sha256
    RUN/scoring.json         what the survey scoring reads
    RUN/human.parquet        a survey run's real answers, coded
    RUN/scenarios.parquet    a scenario run's scenarios: the level of each factor and the vignette
    RUN/units/<unit_id>/     a survey unit: UNIT_TABLES as Parquet, DONE
    RUN/threads/<thread_id>/ a thread study's thread: THREAD_TABLES as Parquet, DONE
    RUN/population.parquet   an epidemic run's agents: cell, region, household
    RUN/bank.parquet         an epidemic run's reporting bank: P(report) per cell x case level (x household)
    RUN/replicates/<id>/     an epidemic replicate: EPIDEMIC_TABLES as Parquet, DONE
    RUN/attributes/<judge>/  ``pvsst judge attributes``: one judge's attribute guesses (guesses.parquet), DONE
    RUN/judgments/<judge>/<trial_id>/  ``pvsst judge``: one judge's judged posts of a trial, DONE
    RUN/analysis/            the outputs of ``pvsst analyze`` and ``pvsst survey score`` (and
                             ``analysis/judgments/``, each judge's judged posts of the whole run)
    RUN/report/              the report of ``pvsst report``
    RUN/.pvsst.lock          the run-folder lock (:mod:`pvsst.core.run_folder`) and who holds it

A unit folder (trial or survey unit) is complete when it holds ``DONE``, written last.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> run = Path(tempfile.mkdtemp())
>>> (run / TRIALS / "t1").mkdir(parents=True)
>>> _ = (run / TRIALS / "t1" / DONE).write_text("ok\\n")
>>> (run / TRIALS / "t2").mkdir()
>>> is_complete(run / TRIALS / "t1"), is_complete(run / TRIALS / "t2"), table_file("posts")
(True, False, 'posts.parquet')
"""
from __future__ import annotations

from pathlib import Path

MANIFEST = "manifest.json"
CACHE = "cache.sqlite"
MATERIALS = "materials"
PERSONAS = "personas.parquet"
TRIALS = "trials"
AUDITS = "audits"
METRICS = "metrics.json"
SURVEY = "survey.json"
SCORING = "scoring.json"
HUMAN = "human.parquet"
UNITS = "units"
ANALYSIS = "analysis"
REPORT = "report"
JUDGMENTS = "judgments"
THREADS = "threads"
ATTRIBUTES = "attributes"
DONE = "DONE"
LOCK = ".pvsst.lock"

REPLICATES = "replicates"
POPULATION = "population.parquet"
BANK = "bank.parquet"
CELLS = "cells.parquet"
SCENARIOS = "scenarios.parquet"
SIMULATE_SPEC = "simulate.yaml"
CACHE_FILES = frozenset({CACHE, f"{CACHE}-wal", f"{CACHE}-shm"})
RUN_ENTRIES = frozenset({MANIFEST, *CACHE_FILES, MATERIALS, PERSONAS, TRIALS, AUDITS,
                         SURVEY, SCORING, HUMAN, CELLS, SCENARIOS, UNITS, ANALYSIS, REPORT, SIMULATE_SPEC,
                         JUDGMENTS, THREADS, ATTRIBUTES, REPLICATES, POPULATION, BANK})
"""Every name pvsst writes at the top of a run folder (a folder holding only these is a run's)."""
RUN_RECORDS = frozenset({PERSONAS, TRIALS, AUDITS, SURVEY, HUMAN, UNITS, THREADS, REPLICATES, POPULATION, BANK})
"""The names among :data:`RUN_ENTRIES` that only a run writes (its units and its inputs): a folder holding
one of them but no manifest lost its manifest."""

TRIAL_TABLES = ("agents", "posts", "votes", "exposures", "edges", "llm_calls")
"""The tables of a study trial that are read across trials (a trial also holds ``prompts``)."""
UNIT_TABLES = ("responses", "llm_calls", "prompts")
"""The tables of a survey unit."""
AUDIT_TABLES = ("agents", "posts", "votes", "llm_calls", "prompts")
"""The tables of a study audit unit (``agents`` holds each member's matched set, group and role)."""
EPIDEMIC_TABLES = ("region_days", "decisions")
"""The tables of an epidemic replicate: one row per region and day, one row per decision to report."""
SURVEY_RUN_TABLES = ("human", "personas")
"""The tables a survey run holds once, beside its units."""


def table_file(name: str) -> str:
    """The file name of the table ``name`` (Parquet)."""
    return f"{name}.parquet"


def is_complete(unit_dir: str | Path) -> bool:
    """Whether a trial or survey-unit folder was written to the end (its ``DONE`` marker is there)."""
    return (Path(unit_dir) / DONE).is_file()
