"""Lexical convergence: PV-SST's primary metric, mean pairwise TF-IDF cosine similarity, in linear time.

For texts ``t_1..t_n`` let ``X`` be their TF-IDF matrix (``TfidfVectorizer(stop_words="english")``
fitted on the same texts, rows L2-normalised) and ``S = X X^T`` the cosine matrix. The metric is the
mean off-diagonal cosine

    sim = (sum(S) - trace(S)) / (n (n - 1)),

and because ``sum(S) = ||sum_i x_i||^2`` and ``trace(S) = sum_i ||x_i||^2`` it needs only the column sums
of ``X``: O(nnz) time and O(vocabulary) extra memory instead of O(n^2). ``trace(S)`` is the number of
non-empty rows (a post made only of stop words has an all-zero row), which equals PV-SST's ``n`` when
every post has a content word. Fewer than two texts give ``nan``; texts with no content word at all
give 0.

``edge_cases="reference"`` reproduces PV-SST's reference code where the two differ: fewer than two
texts give 0.0, and the diagonal removed is ``n`` for every text, so a post without a content word
(an all-zero row, whose self-cosine is 0) pulls the mean below pvsst's value (the protocol setting
``similarity_edge_cases``).

Reference: Usman & Williamson, PV-SST (arXiv 2608.20438), "final honest pairwise similarity".

Examples
--------
>>> texts = ["labels protect users", "labels protect creators", "chronological feeds help"]
>>> round(pairwise_tfidf_similarity(texts), 12) == round(pairwise_tfidf_similarity_dense(texts), 12)
True
>>> pairwise_tfidf_similarity(["only one"]), pairwise_tfidf_similarity(["only one"], edge_cases="reference")
(nan, 0.0)
>>> round(pairwise_tfidf_similarity(["labels protect", "the"], edge_cases="reference"), 12)
-0.5
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy import sparse

_DENSE_CHUNK_ROWS = 2048


def tfidf_matrix(texts: Iterable[str]) -> sparse.csr_matrix:
    """PV-SST's TF-IDF rows (English stop words removed, L2-normalised); all-zero when no vocabulary."""
    texts = ["" if t is None or (isinstance(t, float) and np.isnan(t)) else str(t) for t in texts]
    try:
        # Imported here: scikit-learn (with scipy.stats) takes ~1 s to import, and a process that runs no
        # trial (a run's driver, `pvsst prereg`, `pvsst estimate`) never needs it.
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(stop_words="english").fit_transform(texts).tocsr()
    except ValueError:  # "empty vocabulary": no text has a content word
        return sparse.csr_matrix((len(texts), 1))


EDGE_CASES = ("pvsst", "reference")


def pairwise_tfidf_similarity(texts: Iterable[str], edge_cases: str = "pvsst") -> float:
    """Mean off-diagonal TF-IDF cosine of ``texts`` in O(nnz) time, without the n x n matrix.

    ``edge_cases``: ``pvsst`` (fewer than two texts: nan; diagonal = non-empty rows) or ``reference``
    (fewer than two texts or an empty vocabulary: 0.0; diagonal = ``n``).
    """
    if edge_cases not in EDGE_CASES:
        raise ValueError(f"edge_cases must be one of {EDGE_CASES}, got {edge_cases!r}")
    texts = list(texts)
    if edge_cases == "reference":
        if len(texts) < 2:
            return 0.0
        rows = tfidf_matrix(texts)
        if rows.nnz == 0:  # the reference's TfidfVectorizer raised "empty vocabulary": 0.0
            return 0.0
        return mean_offdiagonal_cosine(rows, diagonal="n")
    return mean_offdiagonal_cosine(tfidf_matrix(texts))


def pairwise_tfidf_similarity_dense(texts: Iterable[str]) -> float:
    """The same metric from the full n x n cosine matrix (reference for tests and benchmarks)."""
    return mean_offdiagonal_cosine_dense(tfidf_matrix(list(texts)))


def mean_offdiagonal_cosine(rows: sparse.spmatrix, diagonal: str = "rows") -> float:
    """``(||sum_i x_i||^2 - sum_i ||x_i||^2) / (n (n - 1))`` for L2-normalised (or zero) rows ``x_i``.

    ``diagonal="n"`` subtracts ``n`` instead of ``sum_i ||x_i||^2`` (the reference code's formula).

    >>> rows = sparse.csr_matrix([[1.0, 0.0], [0.6, 0.8], [0.0, 0.0]])
    >>> round(mean_offdiagonal_cosine(rows), 12), round(mean_offdiagonal_cosine(rows, diagonal="n"), 12)
    (0.2, 0.033333333333)
    """
    n = rows.shape[0]
    if n < 2:
        return float("nan")
    column_sums = np.asarray(rows.sum(axis=0)).ravel()
    diagonal = float(n) if diagonal == "n" else float(rows.multiply(rows).sum())
    return float((column_sums @ column_sums - diagonal) / (n * (n - 1)))


def mean_offdiagonal_cosine_dense(rows: sparse.spmatrix) -> float:
    """:func:`mean_offdiagonal_cosine` through the materialised n x n matrix ``S = X X^T``."""
    n = rows.shape[0]
    if n < 2:
        return float("nan")
    rows = sparse.csr_matrix(rows)
    similarity = np.empty((n, n))
    for start in range(0, n, _DENSE_CHUNK_ROWS):
        similarity[start:start + _DENSE_CHUNK_ROWS] = (rows[start:start + _DENSE_CHUNK_ROWS] @ rows.T).toarray()
    return float((similarity.sum() - np.trace(similarity)) / (n * (n - 1)))


def similarity_by_round(posts: pd.DataFrame, *, agent_ids: Iterable | None = None,
                        group: tuple[str, ...] = ("trial_id", "round")) -> pd.DataFrame:
    """Pairwise TF-IDF similarity of the posts in each (trial, round), optionally of some agents only.

    Returns columns ``group`` + ``n_posts``, ``pairwise_similarity``.

    >>> posts = pd.DataFrame({"trial_id": "t", "round": [0, 0, 1, 1], "agent_id": [1, 2, 1, 2],
    ...                       "text": ["cats purr", "dogs bark", "cats purr", "cats purr loudly"]})
    >>> similarity_by_round(posts)["pairwise_similarity"].round(3).tolist()
    [0.0, 0.709]
    """
    group = tuple(c for c in group if c in posts.columns)
    if agent_ids is not None:
        posts = posts[posts["agent_id"].isin(list(agent_ids))]
    rows = [{**dict(zip(group, key if isinstance(key, tuple) else (key,))), "n_posts": len(frame),
             "pairwise_similarity": pairwise_tfidf_similarity(frame["text"])}
            for key, frame in posts.groupby(list(group), sort=True)]
    return pd.DataFrame(rows, columns=[*group, "n_posts", "pairwise_similarity"])
