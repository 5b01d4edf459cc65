"""A trial as a transcript: what each agent saw, what it wrote, how it voted (``pvsst show``).

Read from the run store only: ``exposures`` (the feed: who was shown, in which slot, with which like
count), ``posts`` (the raw text, stance and confidence after the reply), ``votes``, and, with
``prompts=True``, the full request texts on record (``prompts.parquet`` linked through ``llm_calls``),
system message and user message, exactly: every line break is shown as ``↵`` at the end of its line, so
an empty line, a space at a line's end and a line break at the end of the text are all visible.

Examples
--------
>>> import pandas as pd
>>> tables = {
...     "posts": pd.DataFrame({"round": [0, 0, 1, 1], "agent_id": ["a0", "a1", "a0", "a1"],
...                            "text": ["hi", "yo", "again", "more"], "stance": [1, -1, 2, -1],
...                            "confidence": [0.7, 0.7, 0.8, 0.6], "parse_ok": [True] * 4, "call_id": list("wxyz")}),
...     "votes": pd.DataFrame({"round": [0], "voter_id": ["a0"], "target_agent_id": ["a1"], "value": [-1]}),
...     "exposures": pd.DataFrame({"round": [1], "viewer_id": ["a0"], "position": [0], "shown_agent_id": ["a1"],
...                                "likes_shown": [0], "is_adversarial": [False]}),
... }
>>> print(transcript(tables, agent="a0"))
round 0 · a0
  saw:   (no feed)
  wrote: "hi"  [stance +1, confidence 0.70]
  voted: @a1 -1
round 1 · a0
  saw:   1. @a1 [0 likes] "yo"
  wrote: "again"  [stance +2, confidence 0.80]
  voted: (no votes)
"""
from __future__ import annotations

import pandas as pd


def transcript(tables: dict[str, pd.DataFrame], *, round: int | None = None, agent: str | None = None,
               prompts: bool = False) -> str:
    """The transcript of a trial's ``tables`` (see the module docstring), optionally one round / agent."""
    posts = tables["posts"]
    votes, exposures = tables.get("votes"), tables.get("exposures")
    by_key = {(int(r), a): row for r, a, row in zip(posts["round"], posts["agent_id"], posts.itertuples())}
    requests = _requests(tables) if prompts else {}
    lines: list[str] = []
    for (r, agent_id), row in sorted(by_key.items()):
        if (round is not None and r != round) or (agent is not None and agent_id != agent):
            continue
        lines.append(f"round {r} · {agent_id}")
        if prompts and row.call_id in requests:
            system, user = requests[row.call_id]
            lines += ["  request, system message:", *exact_lines(system), "  request, user message:",
                      *exact_lines(user)]
        lines += _feed_lines(exposures, by_key, r, agent_id)
        state = f"stance {int(row.stance):+d}, confidence {float(row.confidence):.2f}"
        failed = "" if bool(row.parse_ok) else ", reply failed: state kept"
        lines.append(f"  wrote: {_quoted(row.text)}  [{state}{failed}]")
        lines.append(_vote_line(votes, r, agent_id))
    return "\n".join(lines)


def _feed_lines(exposures: pd.DataFrame | None, by_key: dict, r: int, agent_id: str) -> list[str]:
    shown = pd.DataFrame() if exposures is None else exposures[(exposures["round"] == r)
                                                               & (exposures["viewer_id"] == agent_id)]
    if shown.empty:
        return ["  saw:   (no feed)"]
    out = []
    for i, item in enumerate(shown.sort_values("position").itertuples()):
        source = by_key.get((r - 1, item.shown_agent_id))
        likes = "" if pd.isna(item.likes_shown) else f" [{int(item.likes_shown)} likes]"
        tag = " (adversary)" if bool(item.is_adversarial) else ""
        text = _quoted(source.text) if source is not None else "(post not found)"
        out.append(f"  {'saw:  ' if i == 0 else '      '} {int(item.position) + 1}. "
                   f"@{item.shown_agent_id}{tag}{likes} {text}")
    return out


def _vote_line(votes: pd.DataFrame | None, r: int, agent_id: str) -> str:
    mine = pd.DataFrame() if votes is None else votes[(votes["round"] == r) & (votes["voter_id"] == agent_id)]
    if mine.empty:
        return "  voted: (no votes)"
    return "  voted: " + ", ".join(f"@{t} {int(v):+d}" if v else f"@{t} 0"
                                   for t, v in zip(mine["target_agent_id"], mine["value"]))


def exact_lines(text: object, indent: str = "    | ") -> list[str]:
    """``text`` as printed lines, each line break shown as ``↵`` (carriage returns as ``\\r``).

    >>> exact_lines("a \\n\\nb\\n")
    ['    | a ↵', '    | ↵', '    | b↵']
    >>> exact_lines("no break at the end")
    ['    | no break at the end']
    """
    pieces = str(text).replace("\r", "\\r").split("\n")
    shown = [f"{indent}{piece}↵" for piece in pieces[:-1]]
    return shown + ([f"{indent}{pieces[-1]}"] if pieces[-1] or not shown else [])


def _requests(tables: dict[str, pd.DataFrame]) -> dict[str, tuple[str, str]]:
    """call_id -> the system and user text of its request, from the prompts on record."""
    calls, prompts = tables.get("llm_calls"), tables.get("prompts")
    if calls is None or prompts is None:
        return {}
    text = dict(zip(prompts["prompt_sha256"], zip(prompts["system"], prompts["user"])))
    return {cid: text[key] for cid, key in zip(calls["call_id"], calls["prompt_sha256"]) if key in text}


def _quoted(text: object) -> str:
    """The raw post shown on one line: line breaks made visible as ``\\n``, never new lines."""
    return '"' + str(text).replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n") + '"'
