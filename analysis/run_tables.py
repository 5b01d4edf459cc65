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
from pathlib import Path

import pandas as pd

from pvsst.analysis.report.survey import is_survey_run
from pvsst.analysis.store import RunTables, load_run
from pvsst.core.errors import InputError
from pvsst.core.integrity import complete_unit_dirs
from pvsst.core.run_layout import ANALYSIS, MANIFEST, SURVEY_RUN_TABLES, UNIT_TABLES, UNITS, table_file

__all__ = ["RunTables", "open_run"]

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
    analysis = _analysis_outputs(path / ANALYSIS)
    if not is_survey_run(path):
        return load_run(path, analysis)
    manifest_path = path / MANIFEST
    if not manifest_path.is_file():
        raise InputError(str(path), MANIFEST, "missing")
    units = complete_unit_dirs(path, UNITS)
    frames = {name: _concat([_read_table(u / table_file(name)) for u in units]) for name in UNIT_TABLES}
    frames.update({name: _read_table(path / table_file(name)) for name in SURVEY_RUN_TABLES})
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
