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
    """PV-SST's TF-IDF rows: English stop words removed, vocabulary fitted on ``texts``, rows L2-normalised.

    Parameters
    ----------
    texts : iterable of str
        The texts; ``None`` and NaN count as empty texts.

    Returns
    -------
    scipy.sparse.csr_matrix
        One row per text, one column per vocabulary term; all zero (one column) when no text has a
        content word.

    Notes
    -----
    scikit-learn's ``TfidfVectorizer(stop_words="english")`` with its defaults: the weight of term ``t``
    in text ``d`` is ``tf(t, d) * idf(t)`` with the smoothed ``idf(t) = ln((1 + n) / (1 + df(t))) + 1``
    over ``n`` texts, and each row is divided by its Euclidean norm.

    References
    ----------
    .. [1] G. Salton and C. Buckley, "Term-weighting approaches in automatic text retrieval",
       Information Processing & Management 24(5), 513-523, 1988.

    Examples
    --------
    >>> rows = tfidf_matrix(["labels protect users", "labels protect creators", "the"])
    >>> rows.shape, [round(float(v), 6) for v in rows.multiply(rows).sum(axis=1).A1]
    ((3, 4), [1.0, 1.0, 0.0])
    """
    texts = ["" if t is None or (isinstance(t, float) and np.isnan(t)) else str(t) for t in texts]
    try:
        # a process that runs no trial (a run's driver, `pvsst prereg`, `pvsst estimate`) never needs it
        # lazy: scikit-learn (with scipy.stats) takes ~1 s to import
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(stop_words="english").fit_transform(texts).tocsr()
    except ValueError:  # "empty vocabulary": no text has a content word
        return sparse.csr_matrix((len(texts), 1))


EDGE_CASES = ("pvsst", "reference")


def pairwise_tfidf_similarity(texts: Iterable[str], edge_cases: str = "pvsst") -> float:
    """Mean off-diagonal TF-IDF cosine of ``texts`` in O(nnz) time, without the n x n matrix.

    Parameters
    ----------
    texts : iterable of str
        The posts of one set (e.g. the honest agents' posts of one round).
    edge_cases : {"pvsst", "reference"}
        ``pvsst``: fewer than two texts give NaN and the diagonal removed is the number of non-empty
        rows; ``reference`` (PV-SST's code): fewer than two texts or no content word give 0.0 and the
        diagonal removed is ``n``.

    Returns
    -------
    float
        The mean cosine similarity over ordered pairs of distinct texts: in [0, 1] with ``pvsst``; with
        ``reference`` a text without a content word lowers it, below 0 when few texts have one.

    Notes
    -----
    With ``x_i`` the TF-IDF rows of :func:`tfidf_matrix` and ``S = X X^T``,

        sim = (sum(S) - trace(S)) / (n (n - 1)) = (||sum_i x_i||^2 - sum_i ||x_i||^2) / (n (n - 1)),

    so only the column sums of ``X`` are needed (:func:`mean_offdiagonal_cosine`).

    References
    ----------
    .. [1] Usman and Williamson, "Peer-Voted LLM-Agent Stress Tests" (PV-SST), arXiv 2608.20438:
       the final honest pairwise similarity.
    .. [2] C. D. Manning, P. Raghavan and H. Schütze, *Introduction to Information Retrieval*, ch. 6
       (tf-idf weighting and cosine similarity), Cambridge University Press, 2008.

    Examples
    --------
    >>> round(pairwise_tfidf_similarity(["cats purr", "cats purr loudly", "dogs bark"]), 6)
    0.24412
    >>> pairwise_tfidf_similarity(["one text"]), pairwise_tfidf_similarity(["one text"], edge_cases="reference")
    (nan, 0.0)
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
    """:func:`pairwise_tfidf_similarity` from the full n x n cosine matrix (the reference for tests and benchmarks).

    Parameters
    ----------
    texts : iterable of str
        The texts.

    Returns
    -------
    float
        The mean off-diagonal cosine (NaN for fewer than two texts).

    Notes
    -----
    ``sim = (sum(S) - trace(S)) / (n (n - 1))`` with ``S = X X^T`` materialised, ``X`` the rows of
    :func:`tfidf_matrix`: O(n^2) memory, which the linear form avoids.

    References
    ----------
    .. [1] C. D. Manning, P. Raghavan and H. Schütze, *Introduction to Information Retrieval*, ch. 6,
       Cambridge University Press, 2008.

    Examples
    --------
    >>> texts = ["cats purr", "cats purr loudly", "dogs bark"]
    >>> round(pairwise_tfidf_similarity_dense(texts), 12) == round(pairwise_tfidf_similarity(texts), 12)
    True
    """
    return mean_offdiagonal_cosine_dense(tfidf_matrix(list(texts)))


def mean_offdiagonal_cosine(rows: sparse.spmatrix, diagonal: str = "rows") -> float:
    """Mean off-diagonal cosine of L2-normalised (or zero) rows, from their column sums.

    Parameters
    ----------
    rows : scipy.sparse matrix
        (n, V) rows ``x_i``, each of norm 1 or 0.
    diagonal : {"rows", "n"}
        What is removed as the diagonal: ``sum_i ||x_i||^2`` (the non-empty rows) or ``n`` (PV-SST's
        reference code).

    Returns
    -------
    float
        NaN for fewer than two rows.

    Notes
    -----
    ``(||sum_i x_i||^2 - sum_i ||x_i||^2) / (n (n - 1))``, since ``sum(X X^T) = ||sum_i x_i||^2`` and
    ``trace(X X^T) = sum_i ||x_i||^2``: O(nnz) time and O(V) extra memory.

    References
    ----------
    .. [1] C. D. Manning, P. Raghavan and H. Schütze, *Introduction to Information Retrieval*, ch. 6,
       Cambridge University Press, 2008.

    Examples
    --------
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
    """:func:`mean_offdiagonal_cosine` through the materialised n x n matrix ``S = X X^T``.

    Parameters
    ----------
    rows : scipy.sparse matrix
        (n, V) L2-normalised (or zero) rows.

    Returns
    -------
    float
        NaN for fewer than two rows.

    Notes
    -----
    ``(sum(S) - trace(S)) / (n (n - 1))``, ``S`` computed in chunks of rows.

    References
    ----------
    .. [1] C. D. Manning, P. Raghavan and H. Schütze, *Introduction to Information Retrieval*, ch. 6,
       Cambridge University Press, 2008.

    Examples
    --------
    >>> rows = sparse.csr_matrix([[1.0, 0.0], [0.6, 0.8], [0.0, 0.0]])
    >>> round(mean_offdiagonal_cosine_dense(rows), 12)
    0.2
    """
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

    Parameters
    ----------
    posts : pandas.DataFrame
        ``text``, ``agent_id`` and the ``group`` columns present.
    agent_ids : iterable, optional
        Keep only these agents' posts (e.g. the honest agents).
    group : tuple of str
        The columns that define a set of posts; those missing from ``posts`` are skipped.

    Returns
    -------
    pandas.DataFrame
        The ``group`` columns, ``n_posts`` and ``pairwise_similarity``, one row per group.

    Notes
    -----
    Each group's value is :func:`pairwise_tfidf_similarity` of its posts,
    ``(||sum_i x_i||^2 - sum_i ||x_i||^2) / (n (n - 1))``, with the vocabulary fitted on that group alone.

    References
    ----------
    .. [1] Usman and Williamson, "Peer-Voted LLM-Agent Stress Tests" (PV-SST), arXiv 2608.20438.

    Examples
    --------
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
