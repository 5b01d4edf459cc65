"""The one reader of a run store: a run directory (or any per-trial table) as tidy pandas frames.

A run directory (docs/run-store.md; the names are :mod:`pvsst.core.run_layout`'s) holds ``manifest.json``
and one folder per unit: ``trials/<trial_id>/`` in a study run, ``units/<unit_id>/`` in a survey run. Only
folders with a ``DONE`` marker are complete and read, as ``pvsst analyze`` reads them, so a frame here and
a number in the analysis come from the same rows. Each table is the concatenation over those folders.

Entry points, each returning the one :class:`RunTables` class (or the frames of one trial):

- :func:`open_run` (also ``pvsst.open_run``): any run, everything it holds, for notebooks;
- :func:`load_run`: a study run's complete trials (``pvsst analyze``, ``pvsst judge``);
- :func:`read_survey_run`: a survey run's inputs (instrument, scoring settings, human answers, personas,
  cells) and the tables of its complete units (the survey scoring reads ``responses`` only);
- :func:`read_responses`, :func:`read_prompts`: one table over a survey run's complete units;
- :func:`read_trial_tables`: one stored trial's tables (``pvsst show``);
- :func:`read_manifest`, :func:`iter_unit_tables`: the manifest, and the tables of each complete unit of a
  section one unit at a time (a study's first-round audit units, ``RUN/audits/``);
- :func:`load_trial_table`: a per-trial table from CSV / Parquet (``pvsst stats``, a published table).

Examples
--------
A study run in its smallest form (``pvsst run`` writes the same files, with more tables and columns):

>>> import json, tempfile
>>> run = Path(tempfile.mkdtemp()) / "run"
>>> trial = run / "trials" / "t1"
>>> trial.mkdir(parents=True)
>>> _ = (run / "manifest.json").write_text(json.dumps({"spec_sha256": "ab12"}))
>>> _ = (trial / "metrics.json").write_text(json.dumps({"condition": "likes", "delta_alignment": 0.5}))
>>> pd.DataFrame({"round": [0, 1], "text": ["a", "b"]}).to_parquet(trial / "posts.parquet")
>>> _ = (trial / "DONE").write_text("")
>>> tables = open_run(run)
>>> tables.kind, tables.manifest["spec_sha256"]
('study', 'ab12')
>>> tables.posts
  trial_id  round text
0       t1      0    a
1       t1      1    b
>>> tables.trials[["trial_id", "condition", "delta_alignment"]]
  trial_id condition  delta_alignment
0       t1     likes              0.5
>>> tables.analysis  # nothing analysed yet: `pvsst analyze RUN` writes RUN/analysis/
{}
>>> table = load_trial_table(pd.DataFrame({"model": ["m"], "condition": ["likes"]}),
...                          required=("model", "condition"))
>>> list(table.columns)
['model', 'condition']
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pvsst.core.errors import InputError
from pvsst.core.input_files import read_json
from pvsst.core.integrity import complete_unit_dirs
from pvsst.core.run_layout import (
    ANALYSIS,
    BANK,
    CELLS,
    DONE,
    EPIDEMIC_TABLES,
    MANIFEST,
    METRICS,
    PERSONAS,
    POPULATION,
    REPLICATES,
    SCORING,
    SURVEY,
    SURVEY_RUN_TABLES,
    THREADS,
    TRIAL_TABLES,
    TRIALS,
    UNIT_TABLES,
    UNITS,
    table_file,
)

__all__ = ["RunTables", "completed_trial_dirs", "is_survey_run", "iter_unit_tables", "load_run", "load_trial_table",
           "open_run", "read_manifest", "read_prompts", "read_responses", "read_survey_run", "read_trial_tables"]

TRIAL_FACTOR_COLUMNS = ("trial_id", "block_id", "model", "topic_id", "seed", "condition", "push_direction")
SHOWN_TRIAL_TABLES = ("posts", "votes", "exposures", "llm_calls", "prompts", "agents")
"""The tables of one trial that ``pvsst show`` reads (those present)."""


@dataclass(frozen=True)
class RunTables:
    """What one run directory holds, as frames: the one class every reader of a run store gets.

    ``kind`` is ``"study"``, ``"survey"``, ``"threads"`` or ``"epidemic"``. A study run fills ``trials``
    (one row per trial, from its ``metrics.json``) and ``agents``, ``posts``, ``votes``, ``exposures``,
    ``edges``, ``llm_calls``; a survey run fills ``responses``, ``llm_calls``, ``prompts`` (over its
    units, those read), ``human``, ``personas``, ``cells`` (a cell run), ``instrument`` (``survey.json``:
    the effective instrument and its sha256) and ``scoring`` (``scoring.json``: what the survey scoring
    reads). Frames a run kind does not have are empty. A thread run (``schedule: threads``) fills
    ``comments``, ``actions``, ``agents``, ``comment_votes`` and ``llm_calls`` over its finished threads,
    and ``personas``. An epidemic run (``schedule: epidemic``) fills ``region_days`` and ``decisions``
    over its complete replicates (a ``replicate`` column first), ``bank`` and ``population``.
    ``analysis`` maps each table under ``RUN/analysis/`` (CSV or Parquet) to its frame, by file stem
    (``contrasts``, ``fidelity``, ...), where the reader was asked for them.
    """

    path: Path
    kind: str
    manifest: dict
    trials: pd.DataFrame = field(default_factory=pd.DataFrame)
    agents: pd.DataFrame = field(default_factory=pd.DataFrame)
    posts: pd.DataFrame = field(default_factory=pd.DataFrame)
    votes: pd.DataFrame = field(default_factory=pd.DataFrame)
    exposures: pd.DataFrame = field(default_factory=pd.DataFrame)
    edges: pd.DataFrame = field(default_factory=pd.DataFrame)
    llm_calls: pd.DataFrame = field(default_factory=pd.DataFrame)
    responses: pd.DataFrame = field(default_factory=pd.DataFrame)
    prompts: pd.DataFrame = field(default_factory=pd.DataFrame)
    human: pd.DataFrame = field(default_factory=pd.DataFrame)
    personas: pd.DataFrame = field(default_factory=pd.DataFrame)
    cells: pd.DataFrame = field(default_factory=pd.DataFrame)
    comments: pd.DataFrame = field(default_factory=pd.DataFrame)
    actions: pd.DataFrame = field(default_factory=pd.DataFrame)
    comment_votes: pd.DataFrame = field(default_factory=pd.DataFrame)
    region_days: pd.DataFrame = field(default_factory=pd.DataFrame)
    decisions: pd.DataFrame = field(default_factory=pd.DataFrame)
    bank: pd.DataFrame = field(default_factory=pd.DataFrame)
    population: pd.DataFrame = field(default_factory=pd.DataFrame)
    instrument: dict = field(default_factory=dict)
    scoring: dict = field(default_factory=dict)
    analysis: dict[str, pd.DataFrame] = field(default_factory=dict)

    def __repr__(self) -> str:
        filled = [f"{name} ({len(getattr(self, name))} rows)" for name in self.table_names()]
        outputs = ", ".join(sorted(self.analysis)) or "none (run `pvsst analyze`)"
        return f"RunTables({self.kind} run {self.path}: {', '.join(filled) or 'no tables'}; analysis: {outputs})"

    def table_names(self) -> list[str]:
        """The tables this run has rows in."""
        names = ("trials", *TRIAL_TABLES, *UNIT_TABLES, *SURVEY_RUN_TABLES, "cells", *THREAD_RUN_TABLES,
                 *EPIDEMIC_TABLES, "bank", "population")
        return [name for name in dict.fromkeys(names) if not getattr(self, name).empty]

    def trial(self, trial_id: str) -> dict[str, pd.DataFrame]:
        """The per-trial slices of every trial table (empty frames where a table has no rows)."""
        return {name: _rows_of(getattr(self, name), trial_id) for name in TRIAL_TABLES}


def open_run(path: str | Path) -> RunTables:
    """Open a run directory (``pvsst run`` or ``pvsst survey run``) as pandas frames.

    Parameters
    ----------
    path : the run directory (the ``--out`` of the run).

    Returns
    -------
    RunTables
        The manifest, the tables of the complete trials or survey units and the analysis outputs.

    Raises
    ------
    InputError
        The folder does not exist, has no ``manifest.json``, or a file in it is unreadable.

    Examples
    --------
    >>> import tempfile
    >>> try:
    ...     open_run(tempfile.mkdtemp())
    ... except InputError as err:
    ...     print(err.field, "|", err.problem)
    manifest.json | missing
    """
    path = _run_dir(path)
    analysis = _analysis_outputs(path / ANALYSIS)
    schedule = _read_optional_json(path / MANIFEST, "manifest").get("schedule")
    if schedule == THREADS:
        return _read_thread_run(path, analysis)
    if schedule == EPIDEMIC:
        return _read_epidemic_run(path, analysis)
    if not is_survey_run(path):
        return load_run(path, analysis)
    if not (path / MANIFEST).is_file():
        raise InputError(str(path), MANIFEST, "missing")
    return read_survey_run(path, analysis=analysis)


def completed_trial_dirs(run_dir: str | Path) -> list[Path]:
    """Trial folders with a DONE marker, sorted by name."""
    return complete_unit_dirs(run_dir, TRIALS)


def load_run(run_dir: str | Path, analysis: dict[str, pd.DataFrame] | None = None) -> RunTables:
    """Load the completed trials of a study run directory into :class:`RunTables` (with the ``analysis``
    outputs given, if any).

    A missing directory or manifest, or a DONE trial without ``metrics.json``, raises
    :class:`InputError`. Tables a trial did not write are simply absent from the concatenation.
    """
    run_dir = _run_dir(run_dir)
    manifest_path = run_dir / MANIFEST
    if not manifest_path.exists():
        raise InputError(str(run_dir), MANIFEST, "missing")
    manifest = read_json(manifest_path, "manifest")
    trial_rows, tables = [], {name: [] for name in TRIAL_TABLES}
    for trial_dir in completed_trial_dirs(run_dir):
        metrics_path = trial_dir / METRICS
        if not metrics_path.exists():
            raise InputError(str(trial_dir), METRICS, f"missing in a completed ({DONE}) trial")
        metrics = read_json(metrics_path, "metrics")
        metrics.setdefault("trial_id", trial_dir.name)
        trial_rows.append(metrics)
        for name in TRIAL_TABLES:
            path = trial_dir / table_file(name)
            if path.exists():
                frame = pd.read_parquet(path)
                if "trial_id" not in frame.columns:
                    frame.insert(0, "trial_id", metrics["trial_id"])
                tables[name].append(frame)
    trials = pd.DataFrame(trial_rows)
    frames = {name: (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame())
              for name, parts in tables.items()}
    return RunTables(run_dir, "study", manifest, trials, analysis=analysis or {}, **frames)


EPIDEMIC = "epidemic"
"""The ``schedule`` of an epidemic run's manifest."""


def _read_epidemic_run(run_dir: Path, analysis: dict[str, pd.DataFrame]) -> RunTables:
    """An epidemic run as :class:`RunTables` (kind ``epidemic``): its replicates' tables, bank and population."""
    parts: dict[str, list[pd.DataFrame]] = {name: [] for name in EPIDEMIC_TABLES}
    for replicate, tables in iter_unit_tables(run_dir, REPLICATES, EPIDEMIC_TABLES):
        for name, frame in tables.items():
            parts[name].append(frame.assign(replicate=replicate)[["replicate", *frame.columns]])
    frames = {name: _concat(frames) for name, frames in parts.items()}
    files = {name: _read_table(run_dir / file) if (run_dir / file).is_file() else pd.DataFrame()
             for name, file in (("bank", BANK), ("population", POPULATION))}
    return RunTables(run_dir, EPIDEMIC, read_json(run_dir / MANIFEST, "manifest"), analysis=analysis, **frames,
                     **files)


THREAD_RUN_TABLES = ("comments", "actions", "agents", "comment_votes", "llm_calls")
"""The tables of a thread run's threads that :func:`open_run` reads across threads."""


def _read_thread_run(run_dir: Path, analysis: dict[str, pd.DataFrame]) -> RunTables:
    """A thread run as :class:`RunTables` (kind ``threads``): its finished threads' tables and personas."""
    parts: dict[str, list[pd.DataFrame]] = {name: [] for name in THREAD_RUN_TABLES}
    for _, tables in iter_unit_tables(run_dir, THREADS, THREAD_RUN_TABLES):
        for name, frame in tables.items():
            parts[name].append(frame)
    frames = {name: _concat(frames) for name, frames in parts.items()}
    personas = _read_table(run_dir / PERSONAS) if (run_dir / PERSONAS).is_file() else pd.DataFrame()
    return RunTables(run_dir, "threads", read_json(run_dir / MANIFEST, "manifest"), personas=personas,
                     analysis=analysis, **frames)


def run_schedule(run_dir: str | Path) -> str | None:
    """The ``schedule`` a run's manifest records (``threads``, ``epidemic``), or ``None`` where it records
    none or the folder has no readable manifest.

    Examples
    --------
    >>> import tempfile
    >>> run_schedule(tempfile.mkdtemp()) is None
    True
    """
    path = Path(run_dir) / MANIFEST
    if not path.is_file():
        return None
    try:
        return read_json(path, "manifest").get("schedule")
    except InputError:
        return None


def is_survey_run(run_dir: str | Path) -> bool:
    """Whether ``run_dir`` holds a survey run (``survey.json``) rather than an experiment run."""
    return (Path(run_dir) / SURVEY).is_file()


def read_survey_run(run_dir: str | Path, unit_tables: Sequence[str] = UNIT_TABLES, *,
                    analysis: dict[str, pd.DataFrame] | None = None) -> RunTables:
    """A survey run as :class:`RunTables`: its files beside the units (``survey.json``, ``scoring.json``,
    ``human.parquet``, ``personas.parquet``, ``cells.parquet``; empty where absent), the manifest when it
    has one, and each of ``unit_tables`` over its complete units, each read once.

    A file that is there but unreadable raises :class:`InputError`; what a caller needs of the rest
    (a scoring config, a complete unit) it checks itself.
    """
    run_dir = _run_dir(run_dir)
    units = complete_unit_dirs(run_dir, UNITS)
    frames = {name: _concat([_read_table(u / table_file(name)) for u in units]) for name in unit_tables}
    frames.update({name: _read_table(run_dir / table_file(name)) for name in SURVEY_RUN_TABLES})
    return RunTables(run_dir, "survey", _read_optional_json(run_dir / MANIFEST, "manifest"), **frames,
                     cells=_read_table(run_dir / CELLS), instrument=_read_optional_json(run_dir / SURVEY, "instrument"),
                     scoring=_read_optional_json(run_dir / SCORING, "scoring"), analysis=analysis or {})


def read_responses(run_dir: str | Path) -> pd.DataFrame:
    """All responses of the complete units (those with DONE) of a survey run."""
    responses = read_survey_run(run_dir, ("responses",)).responses
    if responses.empty:
        raise InputError(run_dir, UNITS, "no complete survey unit in this run directory")
    return responses


def read_prompts(run_dir: str | Path) -> pd.DataFrame:
    """The run's prompt table: one row per distinct prompt of the complete units, keyed by
    ``prompt_sha256`` (columns of :mod:`pvsst.sim.llm.prompt_table`: ``prompt_sha256, system, user,
    messages_json, n_messages``); every response row's ``prompt_sha256`` is a key here."""
    prompts = read_survey_run(run_dir, ("prompts",)).prompts
    if prompts.empty:
        raise InputError(run_dir, UNITS, "no prompt table in this run directory (written since prompts are kept)")
    return prompts.drop_duplicates("prompt_sha256").reset_index(drop=True)


def read_manifest(run_dir: str | Path) -> dict:
    """The run's ``manifest.json`` (a missing or malformed one raises :class:`InputError`)."""
    path = _run_dir(run_dir) / MANIFEST
    if not path.is_file():
        raise InputError(str(run_dir), MANIFEST, "missing")
    return read_json(path, "manifest")


def iter_unit_tables(run_dir: str | Path, section: str,
                     names: Sequence[str]) -> Iterator[tuple[str, dict[str, pd.DataFrame]]]:
    """(unit id, tables by name) for each complete unit under ``RUN/<section>/`` in name order, one unit
    read at a time; a table the unit did not write is an empty frame."""
    for unit_dir in complete_unit_dirs(run_dir, section):
        yield unit_dir.name, {name: _read_table(unit_dir / table_file(name)) for name in names}


def read_trial_tables(trial_dir: str | Path) -> dict[str, pd.DataFrame]:
    """The tables of one stored trial (those of :data:`SHOWN_TRIAL_TABLES` present), by name."""
    trial_dir = Path(trial_dir)
    return {name: pd.read_parquet(trial_dir / table_file(name)) for name in SHOWN_TRIAL_TABLES
            if (trial_dir / table_file(name)).is_file()}


def load_trial_table(path_or_frame: str | Path | pd.DataFrame, required: Sequence[str] = ()) -> pd.DataFrame:
    """A per-trial table from CSV / Parquet (or a DataFrame), checked for the ``required`` columns."""
    if isinstance(path_or_frame, pd.DataFrame):
        table, source = path_or_frame, "table"
    else:
        path = Path(path_or_frame)
        source = str(path)
        if not path.exists():
            raise InputError(source, "file", "does not exist")
        try:
            table = pd.read_parquet(path) if path.suffix.lower() in (".parquet", ".pq") else pd.read_csv(path)
        except (ValueError, OSError, pd.errors.ParserError) as err:
            raise InputError(source, "file", f"unreadable table ({type(err).__name__})") from err
    missing = [c for c in required if c not in table.columns]
    if missing:
        raise InputError(source, missing[0], f"missing column (also missing: {', '.join(missing[1:])})"
                         if len(missing) > 1 else "missing column")
    return table


def _run_dir(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_dir():
        raise InputError(str(path), "run directory", "does not exist")
    return path


def _analysis_outputs(folder: Path) -> dict[str, pd.DataFrame]:
    if not folder.is_dir():
        return {}
    return {file.stem: _read_table(file) for file in sorted(folder.iterdir()) if file.suffix in (".csv", ".parquet")}


def _read_table(path: Path) -> pd.DataFrame:
    if not path.is_file():
        return pd.DataFrame()
    try:
        return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except (ValueError, OSError, pd.errors.ParserError) as err:
        raise InputError(str(path), "file", f"unreadable table ({type(err).__name__})") from err


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [frame for frame in frames if not frame.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _read_optional_json(path: Path, field: str) -> dict:
    return read_json(path, field) if path.is_file() else {}


def _rows_of(frame: pd.DataFrame, trial_id: str) -> pd.DataFrame:
    if frame.empty or "trial_id" not in frame.columns:
        return frame
    return frame[frame["trial_id"] == trial_id]
