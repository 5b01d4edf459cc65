"""Which node a persona replies to: SynthPAI's path scores, candidates, top-k cut and softmax draw.

The rule is SynthPAI's (Yukhymenko et al. 2024, "A Synthetic Dataset for Personal Attribute Inference",
repository eth-sri/SynthPAI, ``src/thread/run_thread.py``, ``score_path`` and ``choose_comment`` in mode
``top``), restated here in our words.

**Scores, computed once.** When a node ``v`` joins the thread (the post when the thread starts), every
engaged persona ``p`` gets a score for it, and it is never recomputed as the tree grows. With
``v = u_0, u_1, ..., u_d`` the path from ``v`` up to the post ``u_d`` (``d`` = depth of ``v``),

.. math::

    s_p(v) = \\frac{2 + \\sum_{i=0}^{d-1} (5 \\cdot [\\mathrm{author}(u_i) = p]
             + 1 \\cdot [\\mathrm{author}(u_i) \\ne p])}{d + 1},

except that a comment ``p`` wrote itself scores 0 for ``p`` (it is a leaf when it is added, and the
original zeroes a persona's own leaf). The post scores ``2 / 1 = 2`` for everyone. So a persona is drawn
to sub-threads it took part in (+5) and to replies to the post (+2 at the root, over a short path).

**Choosing a parent** for persona ``p``:

1. Candidates: nodes of the pool (every node, without the post once it has left the pool) that ``p``
   did not write, whose score for ``p`` is not 0 (0: its own, or one it replied to), that are shallower
   than ``max_depth`` (so the reply's depth is at most ``max_depth``) and have fewer than
   ``max_children`` replies (the post: fewer than ``max_root_replies``, uncapped by default).
   Under ``caps="original"`` the post is capped by ``max_children`` like any node, and when fewer than
   ``top_k`` nodes pass, the candidates are every node of the pool ``p`` did not write whose score is not
   0, *ignoring the depth and children caps*: the original's fallback, which breaks both caps.
2. Keep the ``top_k`` highest scores (a stable sort, descending: ties keep pool order, i.e. the order
   the nodes joined). With comment votes on, the sort key is (net votes, score).
3. Draw one with probabilities ``softmax`` of the kept raw scores,
   ``P(v) = exp(s_p(v)) / sum_w exp(s_p(w))``, using the given numpy ``Generator``.
4. Set the drawn node's score for ``p`` to 0 (:meth:`ScoreBook.take`): ``p`` never replies to it again.

Examples
--------
A post ``r`` by A; ``a`` by B replies to it; ``b`` by C replies to ``a``:

>>> tree = ThreadTree.start("A")
>>> a = tree.add(0, "B"); b = tree.add(a, "C")
>>> [round(path_score(tree.path_authors(b), p), 12) for p in ("B", "C", "D")]   # (1+5+2)/3, own leaf, (1+1+2)/3
[2.666666666667, 0.0, 1.333333333333]
>>> book = ScoreBook(["B", "C", "D"], tree)
>>> choice = choose_parent(tree, list(range(len(tree))), "D", book.scores["D"], np.random.default_rng(0))
>>> choice.candidates, [round(p, 6) for p in choice.probabilities]   # softmax of D's scores 2, 3/2, 4/3
((0, 1, 2), [0.47171, 0.286106, 0.242184])
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.special import softmax

ROOT_WEIGHT = 2.0
"""What the post adds to a path's score."""
OWN_WEIGHT = 5.0
"""What a comment the persona wrote adds to a path's score."""
OTHER_WEIGHT = 1.0
"""What a comment by anyone else adds."""

CAPS = ("enforce", "original")


@dataclass
class ThreadTree:
    """The shape of one thread: node 0 is the post; each node has a parent, an author and a depth."""

    parents: list[int] = field(default_factory=list)
    authors: list[str] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    children: list[int] = field(default_factory=list)

    @classmethod
    def start(cls, author: str) -> ThreadTree:
        """A thread holding only the post, written by ``author``."""
        return cls([-1], [str(author)], [0], [0])

    def __len__(self) -> int:
        return len(self.parents)

    def add(self, parent: int, author: str) -> int:
        """Add a reply by ``author`` to node ``parent``; returns the new node's id."""
        self.parents.append(int(parent))
        self.authors.append(str(author))
        self.depths.append(self.depths[parent] + 1)
        self.children.append(0)
        self.children[parent] += 1
        return len(self.parents) - 1

    def path(self, node: int) -> list[int]:
        """The nodes from ``node`` up to the post, both included."""
        nodes = [node]
        while self.parents[nodes[-1]] >= 0:
            nodes.append(self.parents[nodes[-1]])
        return nodes

    def path_authors(self, node: int) -> list[str]:
        """The authors along :meth:`path` (``node``'s first, the post's last)."""
        return [self.authors[n] for n in self.path(node)]


def path_score(path_authors: Sequence[str], persona: str) -> float:
    """The score of a node for ``persona`` when the node is added (see the module docstring).

    ``path_authors`` are the authors from the node up to the post (the node's first, the post's last).

    >>> path_score(["A"], "B"), path_score(["B", "A"], "B"), path_score(["C", "B", "A"], "B")
    (2.0, 0.0, 2.6666666666666665)
    """
    if len(path_authors) > 1 and path_authors[0] == persona:
        return 0.0  # the persona's own comment, a leaf when it is added
    comments = path_authors[:-1]
    total = ROOT_WEIGHT + sum(OWN_WEIGHT if author == persona else OTHER_WEIGHT for author in comments)
    return total / len(path_authors)


class ScoreBook:
    """Each engaged persona's score of each node, appended once when the node is added.

    ``scores[p][v]`` is persona ``p``'s score of node ``v``; :meth:`take` zeroes one after ``p`` replies.
    """

    def __init__(self, personas: Sequence[str], tree: ThreadTree):
        self.personas = [str(p) for p in personas]
        self.scores: dict[str, list[float]] = {p: [] for p in self.personas}
        for node in range(len(tree)):
            self.add_node(tree, node)

    def add_node(self, tree: ThreadTree, node: int) -> None:
        """Score ``node`` (just added to ``tree``) for every persona."""
        authors = tree.path_authors(node)
        for persona in self.personas:
            if len(self.scores[persona]) != node:
                raise ValueError(f"node {node} scored out of order")
            self.scores[persona].append(path_score(authors, persona))

    def take(self, persona: str, node: int) -> None:
        """``persona`` replied to ``node``: its score for the node becomes 0 (it never replies there again)."""
        self.scores[persona][node] = 0.0


def candidates(tree: ThreadTree, pool: Sequence[int], persona: str, scores: Sequence[float], *, max_depth: int = 5,
               max_children: int = 3, max_root_replies: int | None = None, top_k: int = 10,
               caps: str = "enforce") -> list[int]:
    """The nodes of ``pool`` (in pool order) that ``persona`` may reply to (step 1 of the module docstring).

    >>> tree = ThreadTree.start("A"); a = tree.add(0, "B")
    >>> candidates(tree, [0, a], "B", [2.0, 0.0])   # its own comment is never a candidate
    [0]
    """
    if caps not in CAPS:
        raise ValueError(f"caps must be one of {CAPS}, got {caps!r}")

    def room(node: int) -> bool:
        if node == 0 and caps == "enforce":
            return max_root_replies is None or tree.children[0] < max_root_replies
        return tree.children[node] < max_children

    open_nodes = [n for n in pool if tree.authors[n] != persona and scores[n] != 0.0]
    capped = [n for n in open_nodes if tree.depths[n] + 1 <= max_depth and room(n)]
    if caps == "original" and len(capped) < top_k:
        return open_nodes  # the original's fallback: the caps are ignored
    return capped


def top_candidates(nodes: Sequence[int], scores: Sequence[float], top_k: int,
                   net_votes: Sequence[int] | None = None) -> list[int]:
    """The ``top_k`` best of ``nodes`` by score (by net votes, then score, when votes are given); a stable
    sort, so ties keep the order of ``nodes``.

    >>> top_candidates([4, 1, 2, 3], [9, 1.0, 2.0, 1.0, 2.0], 3)
    [4, 2, 1]
    """
    if net_votes is None:
        ranked = sorted(nodes, key=lambda n: scores[n], reverse=True)
    else:
        ranked = sorted(nodes, key=lambda n: (net_votes[n], scores[n]), reverse=True)
    return ranked[:top_k]


@dataclass(frozen=True)
class ParentChoice:
    """The drawn parent, the nodes it was drawn among and their probabilities (same order)."""

    node: int
    candidates: tuple[int, ...]
    probabilities: tuple[float, ...]


def choose_parent(tree: ThreadTree, pool: Sequence[int], persona: str, scores: Sequence[float],
                  rng: np.random.Generator, *, max_depth: int = 5, max_children: int = 3,
                  max_root_replies: int | None = None, top_k: int = 10, caps: str = "enforce",
                  net_votes: Sequence[int] | None = None) -> ParentChoice | None:
    """Steps 1-3 of the module docstring; ``None`` when ``persona`` has no candidate (it writes nothing).

    The draw is ``rng.choice(k, p=softmax(kept scores))``; the caller then zeroes the drawn node's score
    (:meth:`ScoreBook.take`).
    """
    allowed = candidates(tree, pool, persona, scores, max_depth=max_depth, max_children=max_children,
                         max_root_replies=max_root_replies, top_k=top_k, caps=caps)
    if not allowed:
        return None
    kept = top_candidates(allowed, scores, top_k, net_votes)
    probabilities = softmax(np.array([scores[n] for n in kept], dtype=float))
    index = int(rng.choice(len(kept), p=probabilities))
    return ParentChoice(kept[index], tuple(kept), tuple(float(p) for p in probabilities))
