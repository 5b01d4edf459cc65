"""The reference implementation's vote sampling (protocol setting ``vote_sampling: reference``).

One Python ``random.Random(seed + 9001 + round)`` per round; for each honest voter in id order,
``rng.sample(eligible, min(k, len(eligible)))``, where ``eligible`` are the indices, in account order
(honest accounts, then adversaries), of this round's posts not written by the voter. The sample's order
is the order the posts are shown in the vote prompt. (pvsst's own sampling draws from the trial's
numpy vote stream instead: :meth:`pvsst.sim.model.SocialModel.vote`.)

Examples
--------
>>> reference_vote_samples(["a00", "a01", "a02", "x00"], ["a00", "a01", "a02"], k=2, seed=101, round=0)
[[2, 1], [0, 3], [0, 1]]
"""
from __future__ import annotations

import random
from collections.abc import Sequence

REFERENCE_VOTE_SEED_OFFSET = 9001


def reference_vote_samples(authors: Sequence[str], voters: Sequence[str], k: int, seed: int,
                           round: int) -> list[list[int]]:
    """For each voter (in the order given), the indices into ``authors`` of the posts it votes on."""
    rng = random.Random(int(seed) + REFERENCE_VOTE_SEED_OFFSET + int(round))
    samples = []
    for voter in voters:
        eligible = [i for i, author in enumerate(authors) if author != voter]
        samples.append(rng.sample(eligible, min(int(k), len(eligible))))
    return samples
