"""With pvsst's own materials, the embedded SmolLM2 model writes posts, not echoes of the prompt: at most
10% of posts repeat five words of the templates' fixed text or hold a placeholder (a small version of
the quickstart measurement in the documentation on study materials).

The trials are five of the embedded engine test's (tests/sim/test_engine_embedded.py: 3 agents x 2 rounds,
the five arms without adversaries; one response cache for the session, a lock per trial), so whichever
test comes second replays the other's replies."""
from __future__ import annotations

from engine_helpers import EMBEDDED_TRIAL_MARKS, embedded_trial

from pvsst.analysis.text.template_echo import echo_summary
from pvsst.sim.materials import default_materials_dir

pytestmark = EMBEDDED_TRIAL_MARKS


def test_embedded_posts_rarely_echo_the_templates(tmp_path_factory):
    templates = {p.stem: p.read_text() for p in default_materials_dir().glob("*.txt")}
    posts = []
    for condition in ("control", "likes", "likes_hidden", "unranked", "follows"):
        posts += list(embedded_trial(condition, 3, tmp_path_factory).posts["text"])
    summary = echo_summary(posts, templates)
    assert summary["posts"] == 30
    assert summary["echo_share"] <= 0.10, summary
