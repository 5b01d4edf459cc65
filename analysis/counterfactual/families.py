"""Benjamini-Hochberg across every test an audit report shows: all sources (models, conditions, topics)
together, one named family per kind of test.

Examples
--------
>>> questions = pd.DataFrame({"model": ["m1", "m2"], "question": "q", "omnibus_p": [0.01, 0.5]})
>>> adjusted_across_sources(questions, pd.DataFrame({"paired_p": [0.2]}), 0.05)[0]["flagged"].tolist()
[True, False]
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from pvsst.analysis.counterfactual.audit import with_mde


def adjusted_across_sources(questions: pd.DataFrame, groups: pd.DataFrame, alpha: float,
                            sources: str = "source") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Benjamini-Hochberg across every test the audit reports, each family named (``bh_family``), and each
    question's minimum detectable effect at the size of its family.

    Parameters
    ----------
    questions, groups : pandas.DataFrame
        ``audit.csv`` and ``audit_groups.csv`` of every source (model x condition x elicitation).
    alpha : float
        The false discovery rate.
    sources : str
        What a source is, for the family's name (e.g. ``model x topic``).

    Returns
    -------
    tuple of pandas.DataFrame
        The tables with ``omnibus_p_bh`` / ``flagged``, ``arity_p_bh`` / ``exceeds_null`` and ``paired_p_bh``
        adjusted across all sources' questions (and groups), ``bh_family`` naming each family and its
        size, and ``mde`` / ``mde_tests`` recomputed for the omnibus family
        (:func:`pvsst.analysis.counterfactual.audit.with_mde`).

    Examples
    --------
    >>> questions = pd.DataFrame({"model": ["m1", "m2"], "question": "q", "omnibus_p": [0.02, 0.04]})
    >>> groups = pd.DataFrame({"model": ["m1"], "group": "x", "paired_p": [0.5]})
    >>> q, g = adjusted_across_sources(questions, groups, 0.05)
    >>> q["omnibus_p_bh"].tolist(), q["bh_family"].iloc[0]
    ([0.04, 0.04], 'omnibus: 2 tests (every source x question)')
    """
    questions, groups = questions.copy(), groups.copy()
    families = []
    for frame, p, adjusted, flag, name in ((questions, "omnibus_p", "omnibus_p_bh", "flagged", "omnibus"),
                                           (questions, "arity_p", "arity_p_bh", "exceeds_null", "arity"),
                                           (groups, "paired_p", "paired_p_bh", None, "paired")):
        if p not in frame:
            continue
        present = frame[p].notna()
        frame[adjusted] = np.nan
        if present.any():
            frame.loc[present, adjusted] = multipletests(frame.loc[present, p].to_numpy(float), alpha=alpha,
                                                         method="fdr_bh")[1]
        if flag is not None:
            frame[flag] = frame[adjusted] < alpha
        family = (f"{name}: {int(present.sum())} tests (every {sources} x question"
                  f"{' x group' if name == 'paired' else ''})")
        if frame is questions:
            families.append(family)
        else:
            groups["bh_family"] = family
    questions["bh_family"] = "; ".join(families)
    if "n_options" in questions:
        questions = with_mde(questions, alpha, int(questions["omnibus_p"].notna().sum()))
    return questions, groups
