"""Secondary lexical-convergence metrics: distinct-n, Self-BLEU and gzip compression ratio.

All three are linear in the total number of tokens, so they scale like the primary TF-IDF metric.
Tokens are lower-cased ``\\w+`` runs.

- ``distinct_n`` (Li et al. 2016): distinct n-grams / all n-grams over the set; lower = more repetitive.
- ``self_bleu`` (Zhu et al. 2018, Texygen): mean over texts of BLEU-4 of the text against all the
  others as references; higher = more alike. BLEU as in Papineni et al. 2002 (clipped n-gram
  precisions, geometric mean with uniform weights, brevity penalty against the closest reference
  length, ties to the shorter) with Chen & Cherry (2014) smoothing method 1: a zero clipped count
  becomes ``epsilon = 0.1`` (nltk's ``sentence_bleu`` with ``SmoothingFunction().method1``). Clipping uses, per n-gram, the largest count in any *other* text; keeping
  each n-gram's two largest counts makes that O(tokens) instead of O(n^2).
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
    """Lower-cased word tokens.

    >>> tokenize("Labels, labels: PROTECT users!")
    ['labels', 'labels', 'protect', 'users']
    """
    return _TOKEN.findall(str(text).lower())


def _ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


def distinct_n(texts: Iterable[str], n: int = 2) -> float:
    """Distinct n-grams / total n-grams across ``texts`` (nan when there is no n-gram)."""
    grams = [g for t in texts for g in _ngrams(tokenize(t), n)]
    return len(set(grams)) / len(grams) if grams else float("nan")


def compression_ratio(texts: Iterable[str]) -> float:
    """Raw / gzip-compressed size of the newline-joined texts (nan for no text)."""
    raw = "\n".join(str(t) for t in texts).encode("utf-8")
    return len(raw) / len(gzip.compress(raw, compresslevel=9, mtime=0)) if raw else float("nan")


def self_bleu(texts: Iterable[str], max_order: int = 4) -> float:
    """Mean BLEU-``max_order`` of each text against all the others (nan for fewer than two texts)."""
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
