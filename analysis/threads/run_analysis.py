"""``pvsst analyze`` on a thread run: shape, reply homophily, lexical convergence and attribute inference.

Reads the run folder only (:mod:`pvsst.analysis.threads.run_tables`) and replaces ``RUN/analysis/``
with the tables of :data:`THREAD_ANALYSIS_FILES` (atomically, as the study analysis does):

==================================  ====================================================================
``thread_shape.csv``                one row per thread (:func:`~pvsst.analysis.threads.shape.thread_shape`)
``thread_depth.csv``                comments per depth over every thread
``thread_children.csv``             nodes by number of replies
``reply_homophily.csv``             same-group share and assortativity of replies against the
                                    within-thread rewiring null, per persona attribute of
                                    :data:`HOMOPHILY_ATTRIBUTES` the agents table has
``reply_similarity_by_depth.csv``   TF-IDF cosine of each reply with its parent against the thread's
                                    other messages, by depth
``path_similarity.csv``             each root-to-leaf path's mean pairwise cosine beside its null
``attribute_inference.csv``         each judge's top-1 / top-3 accuracy per attribute with intervals and
                                    baselines (only after ``pvsst judge attributes``)
==================================  ====================================================================

Examples
--------
>>> import tempfile
>>> try:
...     analyze_thread_run(tempfile.mkdtemp())
... except InputError as err:
...     print(err.field, "|", err.problem)
threads | no finished thread (no DONE marker)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pvsst.analysis.threads.attribute_inference import attribute_inference_table
from pvsst.analysis.threads.convergence import path_similarity, reply_parent_similarity, similarity_by_depth
from pvsst.analysis.threads.reply_homophily import NULL_REPLICATES, homophily_table, reply_homophily
from pvsst.analysis.threads.run_tables import read_attribute_guesses, read_thread_run
from pvsst.analysis.threads.shape import children_distribution, depth_distribution, thread_shape
from pvsst.core.atomic import atomic_directory
from pvsst.core.errors import InputError
from pvsst.core.run_layout import ANALYSIS, THREADS

HOMOPHILY_ATTRIBUTES = ("party", "sex", "age_band", "education", "income_band", "region")
"""The persona attributes reply homophily is measured by (those the run's agents table has)."""
THREAD_ANALYSIS_FILES = {"shape": "thread_shape.csv", "depth": "thread_depth.csv", "children": "thread_children.csv",
                         "homophily": "reply_homophily.csv", "similarity": "reply_similarity_by_depth.csv",
                         "paths": "path_similarity.csv", "attributes": "attribute_inference.csv"}


@dataclass(frozen=True)
class ThreadAnalysis:
    """The tables ``pvsst analyze`` wrote for a thread run (``attributes`` empty before any judge ran)."""

    out_dir: Path
    comments: pd.DataFrame
    shape: pd.DataFrame
    depth: pd.DataFrame
    children: pd.DataFrame
    homophily: pd.DataFrame
    similarity: pd.DataFrame
    paths: pd.DataFrame
    attributes: pd.DataFrame


def analyze_thread_run(run_dir: str | Path, *, replicates: int = NULL_REPLICATES, seed: int = 0) -> ThreadAnalysis:
    """Compute and write the thread analysis of ``run_dir`` (see the module docstring).

    Parameters
    ----------
    run_dir : a thread run's folder.
    replicates : rewiring replicates of each reply-homophily null.
    seed : the seed of the nulls (homophily rewiring, random path sets).

    Returns
    -------
    ThreadAnalysis
        The tables, as written to ``RUN/analysis/``.

    Examples
    --------
    See the module docstring (a folder without a finished thread is refused).
    """
    run_dir = Path(run_dir)
    tables = read_thread_run(run_dir)
    comments = tables["comments"]
    if comments.empty:
        raise InputError(str(run_dir), THREADS, "no finished thread (no DONE marker)")
    agents = tables["agents"].drop_duplicates("persona_id")
    homophily = [row for attribute in HOMOPHILY_ATTRIBUTES if attribute in agents.columns
                 for row in reply_homophily(comments, agents, attribute, replicates=replicates, seed=seed)]
    guesses = read_attribute_guesses(run_dir)
    result = ThreadAnalysis(
        run_dir / ANALYSIS, comments, thread_shape(comments), depth_distribution(comments),
        children_distribution(comments), homophily_table(homophily) if homophily else pd.DataFrame(),
        similarity_by_depth(reply_parent_similarity(comments)), path_similarity(comments, seed=seed),
        attribute_inference_table(guesses, agents) if not guesses.empty else pd.DataFrame())
    with atomic_directory(result.out_dir, ledger=True) as staging:
        for name, file in THREAD_ANALYSIS_FILES.items():
            frame = getattr(result, name)
            if not frame.empty:
                frame.to_csv(staging / file, index=False)
    return result
