"""The names of the per-trial belief-behaviour consistency metrics, for the modules that list metrics.

Examples
--------
>>> set(JUDGED_METRICS) < set(CONSISTENCY_METRICS), "like_rate_chance" in VOTE_METRICS
(True, True)
"""
from __future__ import annotations

JUDGED_METRICS = ("stance_exact_agreement", "stance_side_agreement", "stance_contradiction_rate",
                  "stance_signed_gap")
"""Posts against reported stances: these need a stance judge's judgments."""
VOTE_METRICS = ("like_rate_same_side", "like_rate_other_side", "like_rate_chance", "same_side_like_gap")
"""Votes against reported stances: these need no judge."""
CONSISTENCY_METRICS = JUDGED_METRICS + VOTE_METRICS
"""The per-trial consistency columns (besides the counts ``n_judged_posts`` and ``n_sided_votes``)."""
