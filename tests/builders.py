"""Builders of small valid inputs that many tests start from: one per kind of input.

- ``small_study_data`` / ``small_study_spec``: a minimal study spec in memory (one hypothesis, one contrast),
  sections replaced or merged by keyword.
- ``small_instrument``: the shipped GSS survey instrument cut down to a few questions on scripted models.
- ``weighted_frame`` / ``weighted_instrument``: a synthetic survey with informative weights, and an
  instrument that reads it from a local file.

A study spec *file* (a frozen, shrunken copy of ``scripted_smoke``) is built by
``runner_helpers.small_smoke_spec``, beside the other run-store helpers.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import yaml

from pvsst.experiments.spec.study import StudySpec

GSS = "experiments/surveys/gss2018_spending.yaml"

SMALL_STUDY = {
    "id": "mini", "title": "Minimal",
    "hypotheses": [{"id": "H1", "statement": "Likes raise similarity.", "contrast": "likes_minus_control",
                    "metric": "final_honest_pairwise_similarity", "direction": "positive", "primary": True}],
    "outcomes": {"primary": ["final_honest_pairwise_similarity"]},
    "factors": {"models": ["scripted/imitate"], "topics": ["ai_labels"], "seeds": [101, 211],
                "conditions": ["control", "likes"]},
    "analysis": {"contrasts": {"likes_minus_control": {"treatment": "likes", "control": "control"}}},
}
WEIGHTED_CODES = ("low", "mid", "high")


def small_study_data(**sections) -> dict:
    """A minimal valid study spec as plain data (a fresh copy): 1 model x 1 topic x 2 seeds x 2 arms.

    A keyword whose value is a dict is merged into that section when the section is a dict (so
    ``factors={"seeds": [101]}`` keeps the other factors); any other value replaces the section.
    """
    data = json.loads(json.dumps(SMALL_STUDY))
    for name, value in sections.items():
        if isinstance(value, dict) and isinstance(data.get(name), dict):
            data[name].update(value)
        else:
            data[name] = value
    return data


def small_study_spec(**sections) -> StudySpec:
    """``small_study_data`` validated as a :class:`StudySpec`."""
    return StudySpec.model_validate(small_study_data(**sections))


def small_instrument(*, model: str = "scripted/echo", conditions=("direct", "persona_label"), questions: int = 2,
                     analysis: dict | None = None, execution: dict | None = None, **changes) -> dict:
    """The shipped GSS instrument with its first ``questions`` questions, ``model`` under ``conditions``,
    50 bootstrap draws and chunks of 4 units. ``analysis`` and ``execution`` are merged into those sections;
    any other keyword replaces a top-level field."""
    spec = yaml.safe_load(open(GSS))
    spec["questions"] = spec["questions"][:questions]
    spec["conditions"] = list(conditions)
    spec["model"] = model
    spec["analysis"].update({"bootstrap_draws": 50, **(analysis or {})})
    spec["execution"].update({"chunk_size": 4, **(execution or {})})
    spec.update(changes)
    return spec


def weighted_frame(n: int = 600, seed: int = 14) -> pd.DataFrame:
    """Respondents of two waves; answer and weight depend on sex; weight also grows with the answer, so
    weighted and unweighted results must differ."""
    rng = np.random.default_rng(seed)
    female = rng.integers(0, 2, n)
    answer = np.where(female == 1, rng.choice([1, 2, 3], n, p=[0.2, 0.3, 0.5]),
                      rng.choice([1, 2, 3], n, p=[0.5, 0.3, 0.2]))
    weight = np.round((0.5 + answer * 0.5) * np.where(female == 1, 2.0, 1.0) * rng.uniform(0.8, 1.2, n), 4)
    return pd.DataFrame({"rid": np.arange(1000, 1000 + n), "year": rng.choice([2010, 2012], n),
                         "age": rng.integers(18, 90, n), "female": female, "q": answer.astype(float),
                         "wt": weight})


def weighted_instrument(path, weight: str | None = "wt", filter_: str | None = "year == 2012") -> dict:
    """An instrument asking ``weighted_frame``'s one question (read from ``path``) of respondent personas,
    grouped by sex, weighted by ``weight`` and restricted by ``filter_``."""
    return {
        "id": "weighted_fixture", "title": "Weighted fixture",
        "data": {"path": str(path), "respondent_id": "rid", "weight": weight, "filter": filter_},
        "questions": [{"id": "q", "wording": "How much?", "column": "q",
                       "options": [{"code": c, "label": c.title(), "values": [i + 1]}
                                   for i, c in enumerate(WEIGHTED_CODES)]}],
        "personas": {"source": "respondents", "n": None, "seed": 0, "id_prefix": "fx-",
                     "attributes": {"age": {"column": "age"},
                                    "sex": {"column": "female", "values": {"female": [1], "male": [0]}}}},
        "model": "scripted/echo", "conditions": ["direct"], "controls": ["oracle", "marginal", "uniform"],
        "grouping": [{"axis": "sex", "persona_column": "sex", "data_column": "female",
                      "data_values": {"male": [0], "female": [1]}}],
        "analysis": {"bootstrap_draws": 200, "min_group_n": 10},
        "execution": {"chunk_size": 1000},
        "seed": 3,
    }


def audit_study_data(*, model: str = "scripted/planted_stance_shift", sets: int = 8, persona_seed: int = 0,
                     vary: dict | None = None, **audit) -> dict:
    """``small_study_data`` on one seed with census personas under the ``third_person`` card (it prints race
    and sex) and an ``audit`` section: race x sex (black / white x female / male) over ``sets`` matched sets,
    499 permutations; other ``audit`` fields by keyword."""
    section = {"vary": vary or {"race_ethnicity": ["black", "white"], "sex": ["female", "male"]},
               "matched_sets": sets, "permutations": 499, **audit}
    return small_study_data(factors={"models": [model], "seeds": [101]},
                            personas={"source": "census", "n": max(60, sets), "seed": persona_seed,
                                      "card_style": "third_person"},
                            analysis={"bootstrap_draws": 200}, audit=section)
