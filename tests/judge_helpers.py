"""Builders for stance-judge tests: small planted-provider studies and scripted judges with known errors."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pvsst.experiments.prereg.freeze import freeze
from pvsst.experiments.study.runner import run_study
from pvsst.sim.llm.providers.judge_scripted import LexiconJudgeProvider
from pvsst.sim.llm.providers.registry import register_scripted_provider
from pvsst.sim.llm.providers.scripted import request_rng

STUDY = """spec_version: 1
id: planted_consistency
title: Planted belief-behaviour consistency
hypotheses:
  - {{id: H1, statement: Likes change similarity., contrast: likes_minus_control,
     metric: final_honest_pairwise_similarity, direction: two_sided, primary: true}}
outcomes: {{primary: [final_honest_pairwise_similarity]}}
factors:
  models: [{model}]
  topics: [ai_labels]
  seeds: {seeds}
  conditions: [control, likes]
trial: {{n_agents: {n_agents}, n_rounds: {n_rounds}}}
analysis:
  contrasts:
    likes_minus_control: {{treatment: likes, control: control{metrics}}}
  bootstrap_draws: 1000
  randomization: {{method: auto, draws: 1000}}
{analysis_extra}execution: {{max_concurrency: 4}}
"""


def planted_study(folder: Path, model: str = "scripted/planted_contradiction", *, seeds=(101, 211),
                  n_agents: int = 6, n_rounds: int = 3, contrast_metrics: tuple[str, ...] = (),
                  analysis_extra: str = "", frozen: bool = True) -> Path:
    """A study spec on one model (control and likes, one topic); frozen unless ``frozen`` is False."""
    folder.mkdir(parents=True, exist_ok=True)
    metrics = f", metrics: [{', '.join(contrast_metrics)}]" if contrast_metrics else ""
    spec = folder / "planted.yaml"
    spec.write_text(STUDY.format(model=model, seeds=list(seeds), n_agents=n_agents, n_rounds=n_rounds,
                                 metrics=metrics, analysis_extra=analysis_extra))
    if frozen:
        freeze(spec)
    return spec


def planted_run(folder: Path, **kwargs) -> Path:
    """Run :func:`planted_study` inline into ``folder / 'run'``; every trial must finish."""
    spec = planted_study(folder, **kwargs)
    summary = run_study(spec, folder / "run", executor="local", workers=1, progress=False)
    assert summary.failed == 0, summary
    return folder / "run"


class ShiftedJudge(LexiconJudgeProvider):
    """The lexicon's reading, moved one level toward neutral (a neutral post to lean support) for every
    post whose request draws below ``share`` (a pure function of the request)."""

    name = "shifted_judge"
    share = 0.25

    def score(self, post: str, topic) -> int:
        level = super().score(post, topic)
        if self._draw < self.share:
            return level - int(np.sign(level)) if level else 1
        return level

    def reply(self, request):
        self._draw = float(request_rng(request).random())
        return super().reply(request)


class NoisyJudge(LexiconJudgeProvider):
    """The lexicon's reading with its side flipped for a share ``error`` of posts (drawn per request)."""

    name = "noisy_judge"
    error = 0.10

    def score(self, post: str, topic) -> int:
        level = super().score(post, topic)
        return -level if self._draw < self.error else level

    def reply(self, request):
        self._draw = float(request_rng(request).random())
        return super().reply(request)


class MuteJudge:
    """Replies prose, never the JSON a judge request asks for: every call fails its schema."""

    name = "mute_judge"

    def reply(self, request):
        from pvsst.sim.llm.types import ProviderReply

        return ProviderReply(text="I cannot tell.", prompt_tokens=1, completion_tokens=3)


def register_test_judges() -> None:
    """``scripted/shifted_judge``, ``scripted/noisy_judge`` and ``scripted/mute_judge`` (this module's classes)."""
    register_scripted_provider("shifted_judge", "judge_helpers:ShiftedJudge")
    register_scripted_provider("noisy_judge", "judge_helpers:NoisyJudge")
    register_scripted_provider("mute_judge", "judge_helpers:MuteJudge")


def independent_kappa(a, b, power: int) -> float:
    """Cohen's weighted kappa from the confusion matrix: 1 - sum(w O) / sum(w E), w = |i - j|^power, over
    the seven stance levels (computed here, not by the library under test)."""
    levels = (3, 2, 1, 0, -1, -2, -3)
    position = {s: i for i, s in enumerate(levels)}
    observed = np.zeros((7, 7))
    np.add.at(observed, ([position[int(x)] for x in a], [position[int(y)] for y in b]), 1.0)
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((7, 7))
    weights = np.abs(i - j) ** power
    return 1.0 - (weights * observed).sum() / (weights * expected).sum()
