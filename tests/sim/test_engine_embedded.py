"""With the embedded SmolLM2 model a 2-round trial completes in every condition;
replies that fail the schema are recorded (parse_ok false), never raised.

A reply cut at the token limit is recorded with status ``truncated``.
``make test`` runs 3 agents per trial (every prompt shape of every arm: round 1 has the feeds, the
adversaries' agenda, the votes; each feed and ballot holds two or more posts) and two distributed sources,
which keeps the suite short on two cores (each call reads a 200-300-token prompt at ~9 ms a token);
the full size, 6 agents, runs with ``PVSST_EMBEDDED_FULL=1``. All trials share one response cache per
session (``engine_helpers.embedded_cache_path``), so a request two arms share (much of the first round)
is answered once, and tests/sim/test_template_echo_embedded.py replays three of these trials.
"""
from __future__ import annotations

import os

import pytest
from engine_helpers import EMBEDDED_TRIAL_MARKS, embedded_trial, embedded_trial_config

from pvsst.sim.conditions import CONDITIONS

pytestmark = EMBEDDED_TRIAL_MARKS


N_AGENTS = 6 if os.environ.get("PVSST_EMBEDDED_FULL") == "1" else 3


@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_two_round_trial_completes(tmp_path_factory, condition):
    config = embedded_trial_config(condition, N_AGENTS)
    result = embedded_trial(condition, N_AGENTS, tmp_path_factory)
    n_accounts = N_AGENTS + config.n_adversaries
    assert len(result.posts) == n_accounts * 2
    assert len(result.llm_calls) == 2 * n_accounts + 2 * N_AGENTS  # posts of every account + honest votes
    calls = result.llm_calls
    assert set(calls["status"]) <= {"ok", "parse_error", "empty", "refusal", "truncated"}
    # every failed post call is a recorded parse failure that kept the stance
    failed = result.posts[~result.posts["parse_ok"]]
    assert (calls["status"] != "ok").sum() >= len(failed)
    assert result.posts["text"].str.len().le(180).all()
    adversarial = int(result.exposures["is_adversarial"].sum()) if len(result.exposures) else 0
    assert adversarial == config.expected_adversarial_impressions
