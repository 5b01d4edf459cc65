"""One question's rows of a matched-set table, checked: the shared first step of
:func:`pvsst.analysis.counterfactual.audit.matched_answers` (one answer per member) and
:func:`pvsst.analysis.counterfactual.distributions.matched_distributions` (one distribution per member).

Examples
--------
>>> table = pd.DataFrame({"set_id": [1, 1, 2], "group": ["y", "x", "x"], "question": "q", "answer": "a"})
>>> rows, groups = question_rows(table, "q", ("set_id", "group", "question", "answer"), "answer", "answers",
...                               "answers")
>>> len(rows), groups
(3, ('x', 'y'))
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from pvsst.core.errors import InputError


def question_rows(table: pd.DataFrame, question: str, columns: Sequence[str], value: str, noun: str, source: str
                  ) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The rows of ``question`` and its groups in sorted order.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per member (``set_id``, ``group``) and question, with ``columns``.
    question : str
        The question kept.
    columns : sequence of str
        Columns the table must have (a missing one is an :class:`InputError` naming it).
    value : str
        The column holding a member's reply (``answer`` or ``probabilities``), named in the error when a
        member (set and group) has two rows for the question.
    noun : str
        What a row holds, in the plural, for that error (``answers``, ``distributions``).
    source : str
        What the table is, named in errors.

    Returns
    -------
    tuple
        ``(rows, groups)``: the question's rows and the sorted group labels as strings.

    Examples
    --------
    >>> table = pd.DataFrame({"set_id": [1, 1], "group": "x", "question": "q", "answer": ["a", "b"]})
    >>> question_rows(table, "q", ("set_id", "group", "question", "answer"), "answer", "answers", "answers")
    Traceback (most recent call last):
    ...
    pvsst.core.errors.InputError: answers: answer: two answers of set 1, group 'x' to question 'q'
    """
    for column in columns:
        if column not in table.columns:
            raise InputError(source, column, "missing column")
    rows = table[table["question"] == question]
    repeated = rows.duplicated(["set_id", "group"])
    if repeated.any():
        dup = rows.loc[repeated, ["set_id", "group"]].iloc[0]
        raise InputError(source, value, f"two {noun} of set {dup['set_id']}, group {dup['group']!r} "
                         f"to question {question!r}")
    return rows, tuple(sorted(map(str, pd.unique(rows["group"]))))
