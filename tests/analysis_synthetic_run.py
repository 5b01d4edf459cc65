"""A synthetic run store with the documented schema (docs/run-store.md), for analysis tests.

Mechanistic posts: each honest agent writes words from a topic vocabulary; in arms listed in
``imitation`` it copies words from a shared per-trial "trending" pool with the given probability, which
plants a known lexical-convergence effect. Everything is drawn from ``numpy.default_rng(seed)``.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

VOCABULARY = ("labels provenance users creators burden platforms tools trust accountability reach identity "
              "speakers verification feeds ranking chronological control communities targeting ads outreach "
              "campaigns media persuasion audit policy safety cost fairness").split()
ADVERSARIES = {"control": 0, "likes": 0, "single_source": 1, "distributed_sources": 4}


def synthetic_trial(trial_id: str, condition: str, push: str, seed: int, *, n_honest: int = 6,
                    n_rounds: int = 3, imitation: dict[str, float] | None = None) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    imitation = imitation or {}
    n_adv = ADVERSARIES[condition]
    honest = list(range(n_honest))
    adversaries = list(range(100, 100 + n_adv))
    initial = rng.permutation(np.resize([-3, -2, -1, 1, 2, 3], n_honest))
    agents = pd.DataFrame({
        "trial_id": trial_id, "agent_id": honest + adversaries,
        "role": ["honest"] * n_honest + ["adversary"] * n_adv,
        "persona_id": [f"p{i}" for i in honest + adversaries],
        "region": rng.choice(["north", "south"], size=n_honest + n_adv),
        "initial_stance": list(initial) + [3 if push == "support" else -3] * n_adv,
        "initial_confidence": 0.7})
    trending = list(rng.choice(VOCABULARY, size=4, replace=False))
    stance = dict(zip(honest, initial.astype(int)))
    posts, votes, exposures, edges = [], [], [], []
    for r in range(n_rounds):
        for a in honest + adversaries:
            words = [str(rng.choice(trending)) if rng.random() < imitation.get(condition, 0.0)
                     else str(rng.choice(VOCABULARY)) for _ in range(8)]
            ok = bool(rng.random() > 0.05)
            if a in stance and ok:
                stance[a] = int(np.clip(stance[a] + rng.integers(-1, 2), -3, 3))
            posts.append((trial_id, r, a, " ".join(words), stance.get(a, 3 if push == "support" else -3),
                          0.7, ok, f"{trial_id}-{r}-{a}"))
        for v in honest:
            ok = bool(rng.random() > 0.05)
            for t in rng.choice([x for x in honest + adversaries if x != v], size=3, replace=False):
                votes.append((trial_id, r, v, int(t), int(rng.integers(-1, 2)), ok))
            if r > 0:
                shown = [int(x) for x in rng.choice([x for x in honest if x != v], size=2, replace=False)]
                if n_adv:
                    shown.append(adversaries[(v + r + seed) % n_adv])
                for position, s in enumerate(shown):
                    exposures.append((trial_id, r, v, position, s, 0, s in adversaries))
        for v in honest:
            for t in honest:
                if v != t and np.sign(stance[v]) == np.sign(stance[t]) and rng.random() < 0.6:
                    edges.append((trial_id, r, v, t))
    return {
        "agents": agents,
        "posts": pd.DataFrame(posts, columns=["trial_id", "round", "agent_id", "text", "stance", "confidence",
                                              "parse_ok", "call_id"]),
        "votes": pd.DataFrame(votes, columns=["trial_id", "round", "voter_id", "target_agent_id", "value",
                                              "parse_ok"]),
        "exposures": pd.DataFrame(exposures, columns=["trial_id", "round", "viewer_id", "position",
                                                      "shown_agent_id", "likes_shown", "is_adversarial"]),
        "edges": pd.DataFrame(edges, columns=["trial_id", "round", "source", "target"]),
    }


def design(models=("m1", "m2"), topics=("t1", "t2"), seeds=(101, 211), conditions=tuple(ADVERSARIES)):
    push = {101: "support", 307: "support", 211: "oppose", 419: "oppose"}
    for model in models:
        for topic in topics:
            for seed in seeds:
                for condition in conditions:
                    yield {"trial_id": f"{model}-{topic}-{seed}-{condition}", "block_id": f"{model}-{topic}-{seed}",
                           "model": model, "topic_id": topic, "seed": seed, "condition": condition,
                           "push_direction": push.get(seed, "support" if seed % 2 else "oppose")}


def write_run(run_dir: Path, *, spec: dict | None = None, imitation: dict[str, float] | None = None,
              skip: tuple[str, ...] = (), with_edges: bool = False, **design_kwargs) -> Path:
    """Write a run store; trials named in ``skip`` are left without a DONE marker (incomplete)."""
    run_dir.mkdir(parents=True)
    trials = list(design(**design_kwargs))
    (run_dir / "manifest.json").write_text(json.dumps({"spec_sha256": "0" * 64, "spec": spec or {},
                                                       "trials": [t["trial_id"] for t in trials]}))
    for i, factors in enumerate(trials):
        trial_dir = run_dir / "trials" / factors["trial_id"]
        trial_dir.mkdir(parents=True)
        tables = synthetic_trial(factors["trial_id"], factors["condition"], factors["push_direction"],
                                 seed=1000 + i, imitation=imitation)
        for name, frame in tables.items():
            if name != "edges" or with_edges:
                frame.to_parquet(trial_dir / f"{name}.parquet")
        (trial_dir / "metrics.json").write_text(json.dumps(factors))
        if factors["trial_id"] not in skip:
            (trial_dir / "DONE").write_text("")
    return run_dir
