"""Planted-effect providers: registered as scripted models, pure functions of the request, and their
planted sizes hold in the answers they give (4,000 draws per group)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from pvsst.sim.llm.providers.planted import PlantedAnswerShift
from pvsst.sim.llm.providers.registry import validate_model_name
from pvsst.sim.llm.providers.scripted import load_scripted_provider
from pvsst.sim.llm.types import LLMRequest

SCHEMA = {"type": "object",
          "properties": {"answer": {"type": "string", "enum": ["too_much", "about_right", "too_little"]}}}


def ask(model: str, card: str, seed: int) -> str:
    request = LLMRequest(model_name=model, schema=SCHEMA, seed=seed,
                         messages=({"role": "user", "content": f"Answer as this person would:\n{card}\nQuestion: x"},))
    return json.loads(load_scripted_provider(model.removeprefix("scripted/")).reply(request).text)["answer"]


@pytest.mark.parametrize("name", ["planted_answer_shift", "planted_answer_null", "planted_contradiction",
                                  "planted_same_side_votes", "planted_trial_null"])
def test_planted_providers_are_registered(name):
    validate_model_name(f"scripted/{name}")
    assert load_scripted_provider(name).name == name


def test_answer_shift_moves_one_groups_share_by_the_set_amount():
    shares = {}
    for card in ("A 40-year-old Black woman living in Ohio.", "A 40-year-old white woman living in Ohio."):
        answers = [ask("scripted/planted_answer_shift", card, seed) for seed in range(4000)]
        shares[card.split()[2]] = np.mean([a == "about_right" for a in answers])  # the first code, sorted
    assert shares["Black"] - shares["white"] == pytest.approx(0.15, abs=0.045)  # 3 SE of the difference
    assert shares["white"] == pytest.approx(1 / 3, abs=0.03)
    again = [ask("scripted/planted_answer_shift", "A Black woman.", seed) for seed in range(20)]
    assert again == [ask("scripted/planted_answer_shift", "A Black woman.", seed) for seed in range(20)]


def test_answer_shift_distribution_and_bounds():
    provider = PlantedAnswerShift(group_phrase="man", amount=0.5)
    assert provider.distribution(["x", "y"], "a man") == {"x": 1.0, "y": 0.0}
    assert provider.distribution(["x", "y"], "a woman") == {"x": 0.5, "y": 0.5}
    with pytest.raises(ValueError, match="cannot be planted"):
        PlantedAnswerShift(amount=0.9).distribution(["x", "y"], "Black woman")
