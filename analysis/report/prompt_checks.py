"""Checks of what went into the prompts: how agent text was rendered, posts that carried feed-like
markup, and posts that echo the prompt templates instead of saying something.

Examples
--------
>>> import pandas as pd
>>> trials = pd.DataFrame({"condition": ["likes", "likes"], "render": ["verbatim", "verbatim"],
...                        "markup_posts": [2, 0]})
>>> agent_text_check(trials).findings[0][:72]
'agent text entered other prompts verbatim (render: verbatim), as the PV-'
>>> template_echo_check(pd.DataFrame({"trial_id": ["t"], "text": ["nobody has posted here yet"]}),
...                     {"note": "Nobody has posted here yet."}).findings[0]
'WARNING 1 of 1 posts (100.0%) repeat a run of five words of the prompt templates or hold a placeholder'
"""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from pvsst.analysis.report.checks import RunCheck
from pvsst.analysis.text.template_echo import echo_flags

ECHO_WARNING_SHARE = 0.10
"""A template-echo share above this gets a WARNING (issue 11 asks at most 10% on the quickstart)."""


def agent_text_check(trials: pd.DataFrame) -> RunCheck:
    """Render mode of agent text (``data`` / ``verbatim``) and posts whose raw text held markup, per arm."""
    if "render" not in trials.columns or "markup_posts" not in trials.columns:
        return RunCheck("Agent text in prompts", pd.DataFrame(), ["render mode and markup counts not recorded "
                                                                "(a run made before they were)"])
    table = (trials.assign(markup_posts=pd.to_numeric(trials["markup_posts"], errors="coerce"))
             .groupby(["condition", "render"], sort=False)
             .agg(trials=("condition", "size"), markup_posts=("markup_posts", "sum"),
                  trials_with_markup=("markup_posts", lambda s: int((s > 0).sum())))
             .reset_index())
    modes = sorted(set(trials["render"].astype(str)))
    findings = []
    if "data" in modes:
        findings.append("agent text entered other prompts as data (render: data): folded to one line, quotes "
                        "escaped, so no post could add a feed item or a field line")
    if "verbatim" in modes:
        findings.append("agent text entered other prompts verbatim (render: verbatim), as the PV-SST reference "
                        "does: a post holding line breaks or feed markup reached other agents as written")
    total = int(table["markup_posts"].sum())
    line = f"{total} post(s) held line breaks or feed-like markup in their raw text"
    findings.append(f"WARNING {line}, under render: verbatim" if total and "verbatim" in modes else line)
    return RunCheck("Agent text in prompts", table, findings)


def template_echo_check(posts: pd.DataFrame, templates: Mapping[str, str]) -> RunCheck:
    """Share of posts repeating five words of the templates (or a placeholder), overall and per trial."""
    if not templates:
        return RunCheck("Template echo", pd.DataFrame(), ["no templates in the run store (RUN/materials): "
                                                       "template echo not measured"])
    if posts.empty or "text" not in posts.columns:
        return RunCheck("Template echo", pd.DataFrame(), ["no posts"])
    flagged = posts.assign(echo=echo_flags(posts["text"].astype(str), templates))
    table = flagged.groupby("trial_id", sort=True).agg(posts=("echo", "size"), echo_posts=("echo", "sum")).reset_index()
    table["echo_share"] = table["echo_posts"] / table["posts"]
    hits, total = int(flagged["echo"].sum()), len(flagged)
    share = hits / total
    line = (f"{hits} of {total} posts ({share:.1%}) repeat a run of five words of the prompt templates "
            "or hold a placeholder")
    return RunCheck("Template echo", table, [f"WARNING {line}" if share > ECHO_WARNING_SHARE else line])
