"""Benchmark: linear-time TF-IDF similarity vs the n x n matrix at 20,000 generated posts.

``make test`` runs 5,000 posts (the n x n side is 16x cheaper; the ratio still shows); the target's
size, 20,000, runs with ``PVSST_BENCH_FULL=1`` (``make bench``).

Prints, side by side, the time of each (end to end from texts, and the metric alone on the same fitted
TF-IDF matrix, since both share the fit) and peak traced memory (tracemalloc) of each metric; asserts
equality (1e-12), never timings. Target: >= 100x faster and O(n) memory.
"""
from __future__ import annotations

import os
import time
import tracemalloc

import numpy as np
import pytest

from pvsst.analysis.text.lexical import mean_offdiagonal_cosine, mean_offdiagonal_cosine_dense, tfidf_matrix

N_POSTS = 20_000 if os.environ.get("PVSST_BENCH_FULL") == "1" else 5_000
VOCABULARY = [f"w{i}" for i in range(3000)] + "the of and labels users platforms feeds".split()


def generated_posts(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, len(VOCABULARY) + 1)  # Zipf-like word frequencies
    weights /= weights.sum()
    return [" ".join(rng.choice(VOCABULARY, size=rng.integers(8, 30), p=weights)) for _ in range(n)]


def timed(function, *args):
    start = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - start


def peak_memory(function, *args) -> int:
    tracemalloc.start()
    function(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


@pytest.mark.benchmark
@pytest.mark.slow
def test_linear_similarity_scaling(show):
    texts = generated_posts(N_POSTS)
    x, t_fit = timed(tfidf_matrix, texts)
    linear, t_linear = timed(mean_offdiagonal_cosine, x)
    dense, t_dense = timed(mean_offdiagonal_cosine_dense, x)
    m_linear, m_dense = peak_memory(mean_offdiagonal_cosine, x), peak_memory(mean_offdiagonal_cosine_dense, x)
    show(f"\n{N_POSTS:,} posts ({x.nnz} nonzeros): similarity linear {linear:.15f}, n x n {dense:.15f}")
    show(f"  metric only   linear {t_linear:9.4f} s   n x n {t_dense:9.3f} s   ratio {t_dense / t_linear:9.0f}x")
    show(f"  end to end    linear {t_fit + t_linear:9.4f} s   n x n {t_fit + t_dense:9.3f} s   ratio "
          f"{(t_fit + t_dense) / (t_fit + t_linear):9.1f}x   (shared TF-IDF fit {t_fit:.3f} s)")
    show(f"  peak memory   linear {m_linear / 2**20:9.2f} MiB n x n {m_dense / 2**20:9.1f} MiB ratio "
          f"{m_dense / m_linear:9.0f}x")
    assert abs(linear - dense) <= 1e-12
