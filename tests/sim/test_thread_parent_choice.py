"""Parent choice on hand-built trees: scores and draw probabilities computed by hand, matched to 1e-12.

Scores follow SynthPAI's rule (2 for the post, +5 for a node the persona wrote, +1 for any other
comment, over the number of nodes on the path; a persona's own comment 0); probabilities are
``exp(s) / sum exp(s)`` over the kept candidates, written out with ``math.exp`` here.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from pvsst.sim.threads.parent_choice import ScoreBook, ThreadTree, candidates, choose_parent, path_score

TOL = 1e-12


def softmax_by_hand(*scores: float) -> list[float]:
    total = sum(math.exp(s) for s in scores)
    return [math.exp(s) / total for s in scores]


def assert_close(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert abs(g - w) <= TOL, (got, want)


def test_path_scores_of_the_documented_example():
    # post r by A; a by B replies to r; b by C replies to a
    assert abs(path_score(["C", "B", "A"], "B") - (1 + 5 + 2) / 3) <= TOL
    assert abs(path_score(["C", "B", "A"], "D") - (1 + 1 + 2) / 3) <= TOL
    assert path_score(["C", "B", "A"], "C") == 0.0
    assert abs(path_score(["B", "A"], "D") - (1 + 2) / 2) <= TOL
    assert path_score(["A"], "anyone") == 2.0


def test_direct_reply_to_the_post():
    """Tree 1: only the post; the first reply must go to it; the next persona weighs post and reply."""
    tree = ThreadTree.start("A")
    book = ScoreBook(["B", "C"], tree)
    first = choose_parent(tree, [0], "B", book.scores["B"], np.random.default_rng(1))
    assert first.node == 0 and first.candidates == (0,)
    assert_close(first.probabilities, [1.0])
    book.take("B", 0)
    a = tree.add(0, "B")
    book.add_node(tree, a)
    assert book.scores["B"] == [0.0, 0.0]  # replied to the post; its own leaf
    assert_close(book.scores["C"], [2.0, 1.5])
    second = choose_parent(tree, [0, a], "C", book.scores["C"], np.random.default_rng(1))
    assert second.candidates == (0, a)
    assert_close(second.probabilities, softmax_by_hand(2.0, 1.5))
    # B has nothing left to reply to: the post is taken and the reply is its own
    assert choose_parent(tree, [0, a], "B", book.scores["B"], np.random.default_rng(1)) is None


def test_own_path_scores_high_and_own_leaf_stays_zero():
    """Tree 2: r (A) <- a (B) <- b (C) <- c (D). B's own comment a scores 0 for B for good (computed once),
    even after it got replies; b and c, below a, carry B's +5."""
    tree = ThreadTree.start("A")
    book = ScoreBook(["B", "C", "D", "E"], tree)
    a = tree.add(0, "B"); book.add_node(tree, a)
    b = tree.add(a, "C"); book.add_node(tree, b)
    c = tree.add(b, "D"); book.add_node(tree, c)
    assert_close(book.scores["B"], [2.0, 0.0, (1 + 5 + 2) / 3, (1 + 1 + 5 + 2) / 4])
    assert_close(book.scores["E"], [2.0, (1 + 2) / 2, (1 + 1 + 2) / 3, (1 + 1 + 1 + 2) / 4])
    assert_close(book.scores["D"], [2.0, 1.5, 4 / 3, 0.0])
    choice = choose_parent(tree, [0, a, b, c], "B", book.scores["B"], np.random.default_rng(2))
    assert choice.candidates == (b, c, 0)  # sorted by score, 8/3 > 9/4 > 2
    assert_close(choice.probabilities, softmax_by_hand(8 / 3, 9 / 4, 2.0))
    # the draw is the Generator's choice with exactly those probabilities
    expected = int(np.random.default_rng(2).choice(3, p=softmax_by_hand(8 / 3, 9 / 4, 2.0)))
    assert choice.node == choice.candidates[expected]


def full_and_deep_tree() -> tuple[ThreadTree, ScoreBook]:
    """Tree 3: r (A) <- a (B), a2 (C); a <- b (C), b2 (D)."""
    tree = ThreadTree.start("A")
    book = ScoreBook(["B", "C", "D", "F"], tree)
    for parent, author in ((0, "B"), (0, "C"), (1, "C"), (1, "D")):
        book.add_node(tree, tree.add(parent, author))
    return tree, book


def test_full_node_and_depth_cap():
    tree, book = full_and_deep_tree()
    caps = dict(max_depth=2, max_children=2, top_k=10)
    pool = list(range(len(tree)))
    # a has 2 replies (full); b and b2 sit at depth 2 (a reply would be at depth 3 > 2); the post is uncapped
    assert candidates(tree, pool, "F", book.scores["F"], **caps) == [0, 2]
    choice = choose_parent(tree, pool, "F", book.scores["F"], np.random.default_rng(3), **caps)
    assert_close(choice.probabilities, softmax_by_hand(2.0, 1.5))
    # with the post capped at 2 direct replies only a2 is left
    only = choose_parent(tree, pool, "F", book.scores["F"], np.random.default_rng(3), max_root_replies=2, **caps)
    assert only.node == 2 and only.candidates == (2,)
    assert_close(only.probabilities, [1.0])


def test_the_original_fallback_ignores_both_caps():
    tree, book = full_and_deep_tree()
    pool = list(range(len(tree)))
    choice = choose_parent(tree, pool, "F", book.scores["F"], np.random.default_rng(4), max_depth=2, max_children=2,
                           top_k=10, caps="original")
    # fewer than top_k pass the caps, so every node F did not write (all scores nonzero) is a candidate
    assert choice.candidates == (0, 1, 2, 3, 4)  # scores 2, 3/2, 3/2, 4/3, 4/3: ties keep pool order
    assert_close(choice.probabilities, softmax_by_hand(2.0, 1.5, 1.5, 4 / 3, 4 / 3))
    # with top_k small enough that the capped set suffices, the original caps the post like any node
    assert candidates(tree, pool, "F", book.scores["F"], max_depth=2, max_children=2, top_k=1, caps="original") == [2]


def test_root_removal_and_a_taken_node():
    """Tree 4: after round 0 the post leaves the pool; a node the persona replied to is never drawn again."""
    tree, book = full_and_deep_tree()
    pool = [1, 2, 3, 4]  # the post has left
    book.take("F", 2)
    choice = choose_parent(tree, pool, "F", book.scores["F"], np.random.default_rng(5), max_depth=5, max_children=3)
    assert choice.candidates == (1, 3, 4)
    assert_close(choice.probabilities, softmax_by_hand(1.5, 4 / 3, 4 / 3))


@pytest.mark.parametrize("top_k, kept", [(1, (0,)), (2, (0, 1)), (3, (0, 1, 2))])
def test_top_k_keeps_the_best_scores_in_pool_order(top_k, kept):
    tree, book = full_and_deep_tree()
    choice = choose_parent(tree, list(range(len(tree))), "F", book.scores["F"], np.random.default_rng(6),
                           max_depth=5, max_children=5, top_k=top_k)
    assert choice.candidates == kept
    assert_close(choice.probabilities, softmax_by_hand(*(book.scores["F"][n] for n in kept)))


def test_votes_rank_before_the_cut_and_the_softmax_stays_over_scores():
    tree, book = full_and_deep_tree()
    votes = [0, 0, 0, 3, 1]
    choice = choose_parent(tree, list(range(len(tree))), "F", book.scores["F"], np.random.default_rng(7),
                           max_depth=5, max_children=5, top_k=2, net_votes=votes)
    assert choice.candidates == (3, 4)
    assert_close(choice.probabilities, softmax_by_hand(4 / 3, 4 / 3))


def test_draw_frequencies_follow_the_probabilities():
    tree, book = full_and_deep_tree()
    rng = np.random.default_rng(8)
    pool = list(range(len(tree)))
    draws = [choose_parent(tree, pool, "F", book.scores["F"], rng, max_depth=5, max_children=5).node
             for _ in range(8_000)]
    want = softmax_by_hand(2.0, 1.5, 1.5, 4 / 3, 4 / 3)
    shares = np.bincount(draws, minlength=5) / len(draws)
    # 4 standard errors of a share near 0.33 over 8,000 draws is about 0.021
    assert np.max(np.abs(shares - np.array(want))) < 0.022
