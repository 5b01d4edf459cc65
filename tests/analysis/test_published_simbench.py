"""The published SimBench score (arXiv 2510.17516, its released scorer: mean TV over the rows over their mean
TV of uniform) is pvsst's pooled_simbench, named apart from the per-question view (simbench, mean_simbench)."""
from __future__ import annotations

import numpy as np
import pytest

from pvsst.analysis.survey.scoring import _question_means
from pvsst.analysis.survey.simbench import published_simbench, simbench_score, total_variation


def test_the_published_score_averages_distances_before_the_ratio():
    humans = [np.array([0.9, 0.1]), np.array([0.55, 0.45]), np.array([0.2, 0.3, 0.5])]
    models = [np.array([0.8, 0.2]), np.array([0.5, 0.5]), np.array([0.25, 0.25, 0.5])]
    distance = (0.1 + 0.05 + 0.05) / 3
    uniform = np.mean([float(total_variation(np.ones(len(h)), h)) for h in humans])
    assert published_simbench(models, humans) == pytest.approx(100 * (1 - distance / uniform), abs=1e-12)
    per_question = np.mean([float(simbench_score(m, h)) for m, h in zip(models, humans)])
    assert abs(per_question - published_simbench(models, humans)) > 10  # two different numbers


def test_pooled_simbench_of_fidelity_is_the_published_score():
    humans = [np.array([0.9, 0.1]), np.array([0.55, 0.45])]
    models = [np.array([0.8, 0.2]), np.array([0.5, 0.5])]
    kept = {"simbench": [np.array([float(simbench_score(m, h))]) for m, h in zip(models, humans)],
            "total_variation": [np.array([float(total_variation(m, h))]) for m, h in zip(models, humans)],
            "total_variation_uniform": [np.array([float(total_variation(np.ones(2), h))]) for h in humans]}
    rows = {row["metric"]: row["value"] for row in _question_means(kept, 0.95)}
    assert rows["pooled_simbench"] == pytest.approx(published_simbench(models, humans), abs=1e-12)
    assert rows["mean_simbench"] == pytest.approx(37.5, abs=1e-12)
