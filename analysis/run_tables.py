"""A run directory as pandas frames, for notebooks: :func:`open_run` (also ``pvsst.open_run``).

One call gives everything a run store holds that a researcher reads: the manifest (frozen spec, versions,
deviations, statuses), the tables of the complete trials of a study run (each the concatenation over
trials, with a ``trial_id`` column) or of the complete units of a survey run, and the outputs of
``pvsst analyze`` under ``RUN/analysis/``. Only finished work is read (folders with a ``DONE`` marker), as
``pvsst analyze`` reads it, so a frame here and a number in the analysis come from the same rows.

Examples
--------
A study run in its smallest form (``pvsst run`` writes the same files, with more tables and columns):

>>> import json, tempfile
>>> from pathlib import Path
>>> import pandas as pd
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
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pvsst.analysis.report.survey import is_survey_run
from pvsst.analysis.store import RUN_TABLES, load_run
from pvsst.core.errors import InputError

SURVEY_UNIT_TABLES = ("responses", "llm_calls", "prompts")
SURVEY_RUN_TABLES = ("human", "personas")


@dataclass(frozen=True)
class RunTables:
    """What one run directory holds, as frames; see :func:`open_run`.

    ``kind`` is ``"study"`` or ``"survey"``. A study run fills ``trials`` (one row per trial, from its
    ``metrics.json``) and ``agents``, ``posts``, ``votes``, ``exposures``, ``edges``, ``llm_calls``; a
    survey run fills ``responses``, ``llm_calls``, ``prompts`` (over its units) and ``human``,
    ``personas``. Frames a run kind does not have are empty. ``analysis`` maps each table under
    ``RUN/analysis/`` (CSV or Parquet) to its frame, by file stem (``contrasts``, ``fidelity``, ...).
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
    analysis: dict[str, pd.DataFrame] = field(default_factory=dict)

    def __repr__(self) -> str:
        filled = [f"{name} ({len(getattr(self, name))} rows)" for name in self.table_names()]
        outputs = ", ".join(sorted(self.analysis)) or "none (run `pvsst analyze`)"
        return f"RunTables({self.kind} run {self.path}: {', '.join(filled) or 'no tables'}; analysis: {outputs})"

    def table_names(self) -> list[str]:
        """The tables this run has rows in."""
        names = ("trials", *RUN_TABLES, "responses", "prompts", "human", "personas")
        return [name for name in dict.fromkeys(names) if not getattr(self, name).empty]


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
    path = Path(path)
    if not path.is_dir():
        raise InputError(str(path), "run directory", "does not exist")
    analysis = _analysis_outputs(path / "analysis")
    if not is_survey_run(path):
        data = load_run(path)
        frames = {name: getattr(data, name) for name in RUN_TABLES}
        return RunTables(path, "study", data.manifest, trials=data.trials, analysis=analysis, **frames)
    manifest_path = path / "manifest.json"
    if not manifest_path.is_file():
        raise InputError(str(path), "manifest.json", "missing")
    units = sorted(done.parent for done in (path / "units").glob("*/DONE"))
    frames = {name: _concat([_read_table(u / f"{name}.parquet") for u in units]) for name in SURVEY_UNIT_TABLES}
    frames.update({name: _read_table(path / f"{name}.parquet") for name in SURVEY_RUN_TABLES})
    return RunTables(path, "survey", _read_json(manifest_path), analysis=analysis, **frames)


def _analysis_outputs(folder: Path) -> dict[str, pd.DataFrame]:
    if not folder.is_dir():
        return {}
    outputs = {}
    for file in sorted(folder.iterdir()):
        if file.suffix in (".csv", ".parquet"):
            outputs[file.stem] = _read_table(file)
    return outputs


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


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise InputError(str(path), "json", f"not valid JSON ({type(err).__name__})") from err
