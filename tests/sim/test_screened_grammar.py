"""The screened grammar sampler (sim/llm/providers/screened_grammar.py) gives the replies
llama-cpp-python's own sampler gives, token for token, and its certificate is right.

The certificate is checked against an independent computation: top-k and top-p written out in numpy on
random logits, with the allowed tokens outside the screen drawn at random below the screen's lowest logit.
"""
from __future__ import annotations

import numpy as np
import pytest
from engine_helpers import NEEDS_EMBEDDED_MODEL

from pvsst.sim.llm.providers.screened_grammar import same_candidates


def _top_k_top_p(logits: np.ndarray, top_k: int, top_p: float) -> set[int]:
    """Indices kept by llama.cpp's top-k then top-p (softmax over the top-k, shortest prefix reaching top_p)."""
    order = np.argsort(-logits, kind="stable")[:top_k]
    weights = np.exp(logits[order] - logits[order[0]])
    share = np.cumsum(weights) / weights.sum()
    return set(order[: int(np.nonzero(share >= top_p)[0][0]) + 1].tolist())


def test_the_certificate_never_claims_a_screen_that_changes_the_candidates():
    rng = np.random.default_rng(5)
    claimed = 0
    for _ in range(4000):
        n_seen = int(rng.integers(1, 45))
        seen = rng.normal(0, rng.uniform(0.5, 6), n_seen) + rng.uniform(-3, 3)
        ceiling = float(seen.min() - rng.exponential(rng.uniform(0.1, 8)))
        n_unseen = int(rng.integers(0, 60))
        unseen = ceiling - rng.exponential(rng.uniform(0.01, 5), n_unseen)
        if not same_candidates(seen, ceiling=ceiling, top_k=40, top_p=0.95):
            continue
        claimed += 1
        everything = np.concatenate([seen, unseen])
        assert _top_k_top_p(everything, 40, 0.95) == _top_k_top_p(seen, 40, 0.95)
    assert 1000 < claimed < 4000  # the test exercises both answers


def test_no_allowed_token_on_screen_means_the_full_test():
    assert not same_candidates(np.array([]), ceiling=0.0, top_k=40, top_p=0.95)


embedded = NEEDS_EMBEDDED_MODEL

POST = {"type": "object", "properties": {
    "post": {"type": "string", "maxLength": 180},
    "opinion": {"type": "string", "enum": ["support", "lean support", "lean oppose", "oppose"]},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "reason": {"type": "string", "maxLength": 200}}, "required": ["post", "opinion", "confidence", "reason"]}
VOTES = {"type": "object", "properties": {"votes": {"type": "array",
                                                    "items": {"type": "string", "enum": ["p1", "p2", "p3"]},
                                                    "maxItems": 2}}, "required": ["votes"]}


@embedded
@pytest.mark.embedded
def test_replies_equal_the_library_sampler_token_for_token():
    from pvsst.sim.llm.providers import embedded as provider

    model = provider.load_model()
    assert "_init_sampler" in vars(model)  # installed at load
    messages = [{"role": "system", "content": "You are a person on a social network. Reply in JSON."},
                {"role": "user", "content": "Should AI-made images carry a label? Write a post and vote."}]
    cases = [(POST, 0.7, 3), (POST, 1.0, 11), (VOTES, 0.7, 4)]

    def replies() -> tuple[list[str], dict[str, int]]:
        texts, checks = [], {"screened": 0, "full": 0}
        for schema, t, seed in cases:
            texts.append(provider.generate("smollm2-135m", messages, temperature=t, max_tokens=60, seed=seed,
                                           schema=schema)["text"])
            for kind, n in getattr(model._sampler, "checks", {}).items():
                checks[kind] += n
        return texts, checks

    screened, checks = replies()
    installed = vars(model).pop("_init_sampler")
    try:
        library, library_checks = replies()
    finally:
        model._init_sampler = installed
    assert screened == library
    assert all(text.startswith("{") for text in screened)
    # the screen did the work (most steps never tested the whole vocabulary); the library run had no screen
    assert checks["screened"] > 2 * checks["full"] > 0, checks
    assert library_checks == {"screened": 0, "full": 0}
