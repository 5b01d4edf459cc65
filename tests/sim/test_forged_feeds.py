"""No post can forge a feed line under ``render: data``; the markup audit counts
posts whose raw text held line breaks or feed-like markup, in both render modes."""
from __future__ import annotations

import random
import re
import unicodedata

import pytest
from forging_provider import FORGED_FEED_LINE, FORGED_FIELD_LINE, FORGED_VOTE_LINE, is_forging

from pvsst.experiments.study.trial_pipeline import markup_check
from pvsst.sim.llm.gateway import Gateway
from pvsst.sim.llm.providers.registry import register_scripted_provider
from pvsst.sim.prompts.agent_text import as_data
from pvsst.sim.protocol import Protocol
from pvsst.sim.topics import get_topic
from pvsst.sim.trial.run import run_trial
from pvsst.sim.trial.settings import TrialSetup

N_AGENTS, N_ROUNDS, FEED, VOTES = 6, 3, 5, 3
FEED_ITEM = re.compile(r'^- (?:\[\d+ likes\] )?@\S+ \(')
VOTE_ITEM = re.compile(r'^\[\d+\] @\S+: ')


@pytest.fixture(scope="module", autouse=True)
def _provider():
    register_scripted_provider("forging", "forging_provider:ForgingProvider")


def _run(render: str, condition: str = "likes"):
    config = TrialSetup(trial_id=f"forge_{render}_{condition}", model_name="scripted/forging",
                        topic=get_topic("ai_labels"),
                         condition=condition, seed=101, n_agents=N_AGENTS, n_rounds=N_ROUNDS, feed_size=FEED,
                         votes_per_voter=VOTES, protocol=Protocol(render=render))
    gateway = Gateway()
    try:
        return run_trial(config, gateway)
    finally:
        gateway.close()


def _user_texts(result, phase: str, round: int | None = None) -> list[str]:
    calls = result.llm_calls
    calls = calls[(calls["phase"] == phase) & (calls["agent_id"].str.startswith("a"))]
    if round is not None:
        calls = calls[calls["round"] == round]
    text = dict(zip(result.prompts["prompt_sha256"], result.prompts["user"]))
    return [text[key] for key in calls["prompt_sha256"]]


def _expected_forging_posts(result) -> int:
    calls = result.llm_calls
    posts = calls[calls["phase"] == "post"]
    return int(sum(is_forging(int(seed)) for seed in posts["request_seed"]))


@pytest.mark.parametrize("condition", ["likes", "single_source"])
def test_data_render_shows_exactly_the_genuine_items(condition):
    result = _run("data", condition)
    for round in range(1, N_ROUNDS):
        for prompt in _user_texts(result, "post", round):
            lines = prompt.splitlines()
            assert sum(bool(FEED_ITEM.match(line)) for line in lines) == FEED
            assert FORGED_FEED_LINE not in lines and FORGED_FIELD_LINE not in lines
            assert sum(line.startswith("YOUR STANCE:") for line in lines) == 1
    for prompt in _user_texts(result, "vote"):
        lines = prompt.splitlines()
        assert sum(bool(VOTE_ITEM.match(line)) for line in lines) == VOTES
        assert FORGED_VOTE_LINE not in lines and FORGED_FEED_LINE not in lines
        assert sum(line.startswith("YOUR STANCE:") for line in lines) == 1
    # every quoted post closes only where the template closes it: no unescaped quote inside
    for prompt in _user_texts(result, "post", 1):
        for line in prompt.splitlines():
            if FEED_ITEM.match(line):
                inner = line[line.index('"') + 1:-1]
                assert re.search(r'(?<!\\)"', inner) is None, line
    # the stored post keeps the raw text, line breaks and all
    assert result.posts["text"].str.contains("\n").sum() == _expected_forging_posts(result)


def test_markup_check_counts_forging_posts_in_both_render_modes():
    data, verbatim = _run("data"), _run("verbatim")
    expected = _expected_forging_posts(data)
    assert expected == (N_AGENTS // 2) * N_ROUNDS  # even ordinals forge: a00, a02, a04 each round
    assert markup_check(data) == {"render": "data", "markup_posts": expected}
    assert markup_check(verbatim) == {"render": "verbatim", "markup_posts": expected}


def test_verbatim_render_pastes_the_forged_lines_as_written():
    result = _run("verbatim")
    prompts = _user_texts(result, "post", 1)
    assert any(FORGED_FEED_LINE in p.splitlines() for p in prompts)
    assert any(sum(bool(FEED_ITEM.match(line)) for line in p.splitlines()) > FEED for p in prompts)


def test_as_data_equals_the_per_character_fold_on_random_text():
    """The printable-ASCII shortcut and the cache give the definition's output: every control, format,
    line- and paragraph-separator character folded to a space, runs of white space to one, quotes and
    backslashes escaped (an independent reimplementation, on 3,000 random strings)."""
    def by_definition(text: str) -> str:
        folded = "".join(" " if unicodedata.category(c) in {"Cc", "Cf", "Zl", "Zp"} else c for c in text)
        return re.sub(r"\s+", " ", folded).strip().replace("\\", "\\\\").replace('"', '\\"')

    rng = random.Random(7)
    alphabet = [*"ab Z9-[]@:\"\\", "\n", "\t", "\r", "\x0b", "\x00", "\u200b", "\u202e", "\u2028", "\u2029",
                "\u00a0", "\u3000", "\u00e9", "\U0001f600", "\x85"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30))) for _ in range(3000)]
    texts += ["plain ascii", "  two  spaces  ", 'say "hi" \\ bye', ""]
    for text in texts + texts[:200]:  # the repeats come from the cache
        assert as_data(text) == by_definition(text), repr(text)
