"""Secondary lexical-convergence metrics: distinct-n, Self-BLEU and gzip compression ratio.

All three are linear in the total number of tokens, so they scale like the primary TF-IDF metric.
Tokens are lower-cased ``\\w+`` runs.

- ``distinct_n`` (Li et al. 2016): distinct n-grams / all n-grams over the set; lower = more repetitive.
- ``self_bleu`` (Zhu et al. 2018, Texygen): mean over texts of BLEU-4 of the text against all the
  others as references; higher = more alike. BLEU as in Papineni et al. 2002 (clipped n-gram
  precisions, geometric mean with uniform weights, brevity penalty against the closest reference
  length, ties to the shorter) with Chen & Cherry (2014) smoothing method 1: a zero clipped count
  becomes ``epsilon = 0.1`` (nltk's ``sentence_bleu`` with ``SmoothingFunction().method1``). Clipping
  uses, per n-gram, the largest count in any *other* text; keeping each n-gram's two largest counts
  makes that O(tokens) instead of O(n^2).
- ``compression_ratio``: bytes of the newline-joined texts / bytes of their gzip (level 9, mtime 0);
  higher = more redundant.

Examples
--------
>>> distinct_n(["a b a b", "a b c"], 2)
0.6
>>> round(self_bleu(["the cat sat on the mat", "the cat sat on the mat"]), 6)
1.0
>>> compression_ratio(["same words"] * 50) > compression_ratio(["same words", "other text"])
True
"""
from __future__ import annotations

import gzip
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

_TOKEN = re.compile(r"\w+")
SELF_BLEU_EPSILON = 0.1


def tokenize(text: str) -> list[str]:
    r"""Lower-cased word tokens (``\w+`` runs).

    Parameters
    ----------
    text : str
        Any text (other objects are converted with ``str``).

    Returns
    -------
    list of str

    Examples
    --------
    >>> tokenize("Labels, labels: PROTECT users!")
    ['labels', 'labels', 'protect', 'users']
    """
    return _TOKEN.findall(str(text).lower())


def _ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


def distinct_n(texts: Iterable[str], n: int = 2) -> float:
    """Distinct n-grams over all n-grams across ``texts``: lower means more repetitive.

    Parameters
    ----------
    texts : iterable of str
        The texts of one set.
    n : int
        The n-gram order (n-grams do not cross text boundaries).

    Returns
    -------
    float
        In (0, 1]; NaN when there is no n-gram.

    Notes
    -----
    ``distinct-n = |{n-grams}| / #(n-grams)`` over the tokens of :func:`tokenize`.

    References
    ----------
    .. [1] J. Li, M. Galley, C. Brockett, J. Gao and B. Dolan, "A diversity-promoting objective function
       for neural conversation models", Proceedings of NAACL-HLT 2016, 110-119.

    Examples
    --------
    >>> distinct_n(["a b a b", "a b c"], 2)
    0.6
    >>> distinct_n(["one"], 2)
    nan
    """
    grams = [g for t in texts for g in _ngrams(tokenize(t), n)]
    return len(set(grams)) / len(grams) if grams else float("nan")


def compression_ratio(texts: Iterable[str]) -> float:
    """Raw over gzip-compressed size of the newline-joined texts: higher means more redundant.

    Parameters
    ----------
    texts : iterable of str
        The texts of one set.

    Returns
    -------
    float
        NaN for no text.

    Notes
    -----
    ``ratio = bytes(T) / bytes(gzip_9(T))`` with ``T`` the UTF-8 bytes of the texts joined by newlines
    (gzip level 9, mtime 0, so the value is reproducible).

    References
    ----------
    .. [1] C. Shaib, J. Barrow, J. Sun, A. F. Siu, B. C. Wallace and A. Nenkova, "Standardizing the
       measurement of text diversity: a tool and a comparative analysis of scores", arXiv 2403.00553,
       2024.

    Examples
    --------
    >>> # 549 bytes of one phrase compress about 15-fold; two short texts grow under gzip's header
    >>> compression_ratio(["same words"] * 50) > 10, compression_ratio(["same words", "other text"]) < 1
    (True, True)
    """
    raw = "\n".join(str(t) for t in texts).encode("utf-8")
    return len(raw) / len(gzip.compress(raw, compresslevel=9, mtime=0)) if raw else float("nan")


def self_bleu(texts: Iterable[str], max_order: int = 4) -> float:
    """Mean BLEU-``max_order`` of each text against all the others as references: higher means more alike.

    Parameters
    ----------
    texts : iterable of str
        The texts of one set.
    max_order : int
        The largest n-gram order (4: BLEU-4).

    Returns
    -------
    float
        In [0, 1]; NaN for fewer than two texts.

    Notes
    -----
    For text ``i`` with the others as references, ``BLEU_i = BP_i exp((1/N) sum_{n=1..N} ln p_in)``:
    ``p_in`` is the clipped n-gram precision (each n-gram counted at most as often as in any one other
    text; a zero clipped count becomes ``epsilon = 0.1``, Chen & Cherry's method 1) and
    ``BP_i = min(1, exp(1 - r_i / h_i))`` with ``h_i`` the text's length and ``r_i`` the closest other
    length (ties to the shorter). Self-BLEU is ``mean_i BLEU_i``; it equals nltk's ``sentence_bleu`` with
    ``SmoothingFunction().method1``, in O(tokens).

    References
    ----------
    .. [1] Y. Zhu, S. Lu, L. Zheng, J. Guo, W. Zhang, J. Wang and Y. Yu, "Texygen: a benchmarking platform
       for text generation models", Proceedings of SIGIR 2018, 1097-1100.
    .. [2] K. Papineni, S. Roukos, T. Ward and W.-J. Zhu, "BLEU: a method for automatic evaluation of
       machine translation", Proceedings of ACL 2002, 311-318.
    .. [3] B. Chen and C. Cherry, "A systematic comparison of smoothing techniques for sentence-level
       BLEU", Proceedings of the Ninth Workshop on Statistical Machine Translation, 362-367, 2014.

    Examples
    --------
    >>> round(self_bleu(["the cat sat on the mat", "the cat sat on the mat"]), 6)
    1.0
    >>> # p1 = 1/6 (one clipped "the"), no higher n-gram shared: (1/6 * 0.1/5 * 0.1/4 * 0.1/3) ** (1/4)
    >>> round(self_bleu(["the cat sat on the mat", "a dog ran in the park"]), 6)
    0.040825
    """
    tokens = [tokenize(t) for t in texts]
    n = len(tokens)
    if n < 2:
        return float("nan")
    log_precisions = np.zeros((n, max_order))
    for order in range(1, max_order + 1):
        counts = [Counter(_ngrams(t, order)) for t in tokens]
        top_two = _top_two_counts(counts)
        for i, own in enumerate(counts):
            total = max(1, sum(own.values()))  # as nltk: an order with no n-gram counts 0/1
            clipped = sum(min(c, _max_other(top_two[g], i)) for g, c in own.items())
            log_precisions[i, order - 1] = math.log((clipped or SELF_BLEU_EPSILON) / total)
    lengths = np.array([len(t) for t in tokens])
    references = _closest_other_lengths(lengths)
    brevity = np.array([_brevity_penalty(h, r) for h, r in zip(lengths, references)])
    scores = brevity * np.exp(log_precisions.mean(axis=1))
    return float(scores.mean())


def _top_two_counts(counts: list[Counter]) -> dict:
    """Per n-gram: ((largest count, its text), second largest count)."""
    top: dict = {}
    for i, counter in enumerate(counts):
        for gram, c in counter.items():
            best = top.get(gram)
            if best is None:
                top[gram] = ((c, i), 0)
            elif c > best[0][0]:
                top[gram] = ((c, i), best[0][0])
            elif c > best[1]:
                top[gram] = (best[0], c)
    return top


def _max_other(entry, i: int) -> int:
    (best, owner), second = entry
    return second if owner == i else best


def _closest_other_lengths(lengths: np.ndarray) -> np.ndarray:
    """For each text, the length of the closest *other* text (ties to the shorter), in O(n log n)."""
    values, counts = np.unique(lengths, return_counts=True)
    pos = np.searchsorted(values, lengths)
    below = np.where(pos > 0, values[np.maximum(pos - 1, 0)], -(10 ** 9))
    above = np.where(pos < values.size - 1, values[np.minimum(pos + 1, values.size - 1)], 10 ** 9)
    nearest = np.where(lengths - below <= above - lengths, below, above)
    return np.where(counts[pos] >= 2, lengths, nearest)


def _brevity_penalty(hypothesis_length: int, reference_length: int) -> float:
    if hypothesis_length == 0:
        return 0.0
    if hypothesis_length > reference_length:
        return 1.0
    return math.exp(1 - reference_length / hypothesis_length)
