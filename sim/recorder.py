"""Column-wise trace of a trial (posts, votes, exposures, edges), turned into the run-store tables.

Rows are appended to per-column lists rather than per-row dicts, so a 100,000-agent trial's millions of
exposures stay cheap.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd

from pvsst.sim.llm.prompt_table import PromptLog

POST_COLUMNS = ("trial_id", "round", "agent_id", "text", "stance", "confidence", "parse_ok", "call_id")
VOTE_COLUMNS = ("trial_id", "round", "voter_id", "target_agent_id", "value", "parse_ok")
EXPOSURE_COLUMNS = ("trial_id", "round", "viewer_id", "position", "shown_agent_id", "likes_shown", "is_adversarial")
EDGE_COLUMNS = ("trial_id", "round", "source", "target")

DTYPES = {
    "round": "int32", "stance": "int8", "confidence": "float64", "parse_ok": "bool", "value": "int8",
    "position": "int16", "likes_shown": "Int32", "is_adversarial": "bool",
}


def _typed(values: list, dtype: str | None):
    if dtype is None:
        return values  # text: pandas' string dtype
    if dtype[0].isupper():  # a nullable pandas dtype (Int32: a count that may be missing)
        return pd.array(values, dtype=dtype)
    return np.asarray(values, dtype=dtype)


class TableBuilder:
    """Appends rows column-wise; ``frame()`` returns a typed DataFrame in the declared column order."""

    def __init__(self, columns: tuple[str, ...], dtypes: dict[str, str] | None = None):
        self.columns = columns
        self.dtypes = DTYPES if dtypes is None else dtypes
        self._data: dict[str, list] = defaultdict(list)

    def add(self, *values: object) -> None:
        for column, value in zip(self.columns, values, strict=True):
            self._data[column].append(value)

    def column(self, name: str) -> list:
        return self._data.get(name, [])

    def __len__(self) -> int:
        return len(self._data[self.columns[0]])

    def frame(self) -> pd.DataFrame:
        # Each column is built in its dtype (a frame built first and cast after costs four times as much).
        return pd.DataFrame({c: _typed(self._data.get(c, []), self.dtypes.get(c)) for c in self.columns})


class TrialRecorder:
    """The four event tables of one trial and the texts of its requests (the prompts on record)."""

    def __init__(self) -> None:
        self.posts = TableBuilder(POST_COLUMNS)
        self.votes = TableBuilder(VOTE_COLUMNS)
        self.exposures = TableBuilder(EXPOSURE_COLUMNS)
        self.edges = TableBuilder(EDGE_COLUMNS)
        self.prompts = PromptLog()
