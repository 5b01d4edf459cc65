"""Prompt-prefix reuse on the embedded model gives the replies of fresh evaluations, bit for bit.

A sequence of calls shaped like a trial's (prompts sharing the system text and the topic line, one
repeated with another seed as a retry is, one after a survey option scoring that moves the context
itself, one over llama.cpp's batch size) runs as pvsst runs it (each call may reuse what the context
holds, :mod:`pvsst.sim.llm.providers.prompt_reuse`); the calls that reused a prefix run again with the context
emptied first. Their replies must be equal, and the calls must have reused exactly where they may.
"""
from __future__ import annotations

from engine_helpers import EMBEDDED_TRIAL_MARKS

pytestmark = EMBEDDED_TRIAL_MARKS

SYSTEM = "Role-play for a research study: you are one forum user. Answer with one JSON object and nothing else."
SCHEMA = {"type": "object", "properties": {"post": {"type": "string", "maxLength": 60},
                                           "stance": {"type": "string", "enum": ["support", "neutral", "oppose"]}},
          "required": ["post", "stance"], "additionalProperties": False}
PEOPLE = ["retired engineer; plain-spoken, wants evidence", "civil-liberties blogger; punchy, suspicious of rules",
          "nurse on night shifts; practical, short sentences"]


def messages(person: str, extra: str = "") -> list[dict[str, str]]:
    user = (f"TOPIC: Should AI-generated content be labeled on social platforms?\nYOU: {person}\n{extra}"
            "TASK: write a short post as yourself and give your stance.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


CALLS = [  # (messages, seed, schema)
    (messages(PEOPLE[0]), 11, SCHEMA),
    (messages(PEOPLE[1]), 12, SCHEMA),
    (messages(PEOPLE[1]), 13, SCHEMA),  # the same prompt again, another seed: a schema retry
    ("score", None, None),  # a survey option scoring in between
    (messages(PEOPLE[2]), 14, None),
    (messages(PEOPLE[0], "FEED:\n" + "\n".join(f"[{i}] @a0{i}: \"labels help readers\"" for i in range(34)) + "\n"),
     15, SCHEMA),  # over one batch (512 tokens): evaluated afresh
    (messages(PEOPLE[0]), 16, SCHEMA),
]


REUSING = (1, 2, 6)  # calls that share the system text and the topic line with the call before


def run_calls(indices, fresh: bool) -> tuple[list, list[int]]:
    """Replies of ``CALLS[i]`` for ``i`` in ``indices``, and how many prompt tokens each call reused."""
    from pvsst.sim.llm.providers import embedded, prompt_reuse

    model = embedded.load_model()
    out, reused = [], []
    for index in indices:
        call, seed, schema = CALLS[index]
        if fresh:
            model.reset()
        before = prompt_reuse.reused_tokens(model)
        if call == "score":
            scored = embedded.option_logprobs("smollm2-135m", messages(PEOPLE[2]), ["support", "oppose"])
            out.append(sorted(scored["logprobs"].items()))
        else:
            reply = embedded.generate("smollm2-135m", call, temperature=0.8, max_tokens=12, seed=seed, schema=schema)
            out.append((reply["text"], reply["prompt_tokens"], reply["completion_tokens"]))
        reused.append(prompt_reuse.reused_tokens(model) - before)
    return out, reused


def test_reused_prefixes_give_the_replies_of_fresh_evaluations():
    from pvsst.sim.llm.providers import embedded, prompt_reuse

    model = embedded.load_model()
    assert prompt_reuse.active(model)
    model.reset()
    replies, reused = run_calls(range(len(CALLS)), fresh=False)
    fresh, fresh_reused = run_calls(REUSING, fresh=True)
    assert fresh_reused == [0, 0, 0]  # an emptied context has nothing to reuse
    assert [replies[i] for i in REUSING] == fresh
    # what was reused: at least the system text each time (the retry all of its prompt but the last two
    # tokens); nothing after a scoring moved the context, nothing for a prompt over one batch
    system = len(model.tokenize(f"<|im_start|>system\n{SYSTEM}<|im_end|>\n".encode(), add_bos=False, special=True))
    assert all(reused[i] > system for i in REUSING), (reused, system)
    assert reused[2] == replies[2][1] - 2
    assert [reused[i] for i in (0, 4, 5)] == [0, 0, 0], reused
    assert replies[5][1] > model.n_batch == 512  # the long prompt really is over one batch
    assert all(r[0] for r in replies if isinstance(r, tuple))
