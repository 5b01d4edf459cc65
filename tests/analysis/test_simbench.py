"""The SimBench score: 0 for uniform, 100 for perfect, a hand-computed middle value, vectorised."""
from __future__ import annotations

import numpy as np
import pytest

from pvsst.analysis.survey.simbench import simbench_score, total_variation

HUMAN = np.array([0.5, 0.3, 0.2])


def test_uniform_scores_zero_and_the_human_distribution_scores_one_hundred():
    assert simbench_score(np.full(3, 1 / 3), HUMAN) == pytest.approx(0.0, abs=1e-12)
    assert simbench_score(HUMAN, HUMAN) == 100.0
    # counts are normalised: the same answers as counts score the same
    assert simbench_score(np.array([50, 30, 20]), np.array([5, 3, 2])) == 100.0


def test_a_hand_computed_middle_value_and_a_score_below_uniform():
    # TV(uniform, h) = (1/6 + 1/30 + 2/15) / 2 = 1/6; TV((0.4, 0.4, 0.2), h) = (0.1 + 0.1 + 0) / 2 = 0.1
    assert total_variation(np.full(3, 1 / 3), HUMAN) == pytest.approx(1 / 6, abs=1e-15)
    assert simbench_score(np.array([0.4, 0.4, 0.2]), HUMAN) == pytest.approx(100 * (1 - 0.1 * 6), abs=1e-12)
    # all mass on the rarest option: TV = (0.5 + 0.3 + 0.8) / 2 = 0.8, score 100 (1 - 4.8) = -380
    assert simbench_score(np.array([0.0, 0.0, 1.0]), HUMAN) == pytest.approx(-380.0, abs=1e-9)


def test_vectorised_over_leading_axes_and_undefined_for_uniform_humans():
    models = np.array([[0.4, 0.4, 0.2], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.3, 0.2]])
    scores = simbench_score(models, HUMAN)
    assert scores.shape == (3,) and np.allclose(scores, [40.0, 0.0, 100.0], atol=1e-12)
    humans = np.stack([HUMAN, np.full(3, 1 / 3)])
    both = simbench_score(models[:, None, :], humans)              # (3 models, 2 humans)
    assert both.shape == (3, 2) and np.isnan(both[:, 1]).all() and np.allclose(both[:, 0], [40.0, 0.0, 100.0])
