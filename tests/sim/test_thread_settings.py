"""Thread settings: SynthPAI's defaults, and malformed values rejected in one line naming the field."""
from __future__ import annotations

import pytest

from pvsst.core.errors import InputError
from pvsst.sim.persona_table import load_persona_table
from pvsst.sim.threads.plan import plan_threads
from pvsst.sim.threads.settings import ThreadSettings, thread_settings
from pvsst.sim.topics import get_topic


def test_defaults_are_synthpais():
    s = ThreadSettings()
    assert (s.engaged_profiles, s.n_rounds, s.max_actions, s.p_critic, s.p_short) == (40, 2, 3, 0.4, 0.7)
    assert (s.short_words.min, s.short_words.max, s.long_words.min, s.long_words.max) == (1, 10, 10, 50)
    assert (s.max_depth, s.max_children, s.top_candidates, s.root_candidate_rounds) == (5, 3, 10, 1)
    assert (s.parent_choice, s.caps, s.comment_votes, s.max_root_replies) == ("top", "enforce", False, None)
    assert s.critics_per_round == 16
    # the original's weights (7 - n) : (3 + n), and 1 : 9 from round 7 on
    assert [round(s.comment_probability_in(n), 12) for n in range(9)] == [
        (7 - n) / 10 if n < 7 else 0.1 for n in range(9)]


@pytest.mark.parametrize("values, field, problem", [
    ({"max_depth": 0}, "max_depth", "greater than or equal to 1"),
    ({"p_critic": -0.1}, "p_critic", "greater than or equal to 0"),
    ({"p_short": 1.5}, "p_short", "less than or equal to 1"),
    ({"comment_probability": -0.2}, "comment_probability", "greater than or equal to 0"),
    ({"comment_probability": 0.05}, "comment_probability_floor", "must not exceed comment_probability"),
    ({"short_words": {"min": 9, "max": 3}}, "short_words.min", "must not exceed max"),
    ({"caps": "loose"}, "caps", "'enforce' or 'original'"),
    ({"caps": "original", "max_root_replies": 4}, "max_root_replies", "caps: original"),
    ({"max_depht": 3}, "max_depht", "did you mean 'max_depth'"),
    ({"n_rounds": "2"}, "n_rounds", "valid integer"),
])
def test_malformed_settings_name_the_field(values, field, problem):
    with pytest.raises(InputError) as caught:
        thread_settings(values, source="study.yaml")
    message = str(caught.value)
    assert message.startswith(f"study.yaml: {field}: "), message
    assert problem in message and "\n" not in message


def test_more_engaged_profiles_than_personas_is_refused_before_anything_runs():
    table = load_persona_table()  # pvsst's 24 personas
    with pytest.raises(InputError) as caught:
        plan_threads(ThreadSettings(), table, [get_topic("ai_labels")], seed=1, model_name="scripted/thread_commenter")
    assert str(caught.value) == ("threads: engaged_profiles: 40 engaged personas per thread need at least 41 personas "
                                 "(1 to author the threads, 40 to engage), the persona table has 24")
    plans = plan_threads(ThreadSettings(n_threads=4, engaged_profiles=20), table, [get_topic("ai_labels")], seed=1,
                         model_name="scripted/thread_commenter")
    assert len(plans) == 4
