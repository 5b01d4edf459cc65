"""Shared defaults: the one definition of each setting that the spec models, the analysis plan, the survey
instrument and the command line all start from.

A run records the value it used from the parsed plan or instrument; these names are only where the
defaults are written (``tests/test_constants.py`` checks that each value is written once).

==========================  ===========  ==============================================================
name                        value        where it is the default
==========================  ===========  ==============================================================
ANALYSIS_SEED               20260729     ``analysis.bootstrap_seed`` of a study and an instrument, the
                                         analysis functions' ``seed``, ``pvsst stats paired --seed``
BOOTSTRAP_DRAWS             20,000       ``analysis.bootstrap_draws`` of a study, ``pvsst stats paired --draws``
SURVEY_BOOTSTRAP_DRAWS      1,000        ``analysis.bootstrap_draws`` of a survey instrument and the survey measures
FAILURE_THRESHOLD           0.05         ``analysis.parse_failure_threshold``: a unit (or model) whose
                                         share of failed calls exceeds it is degraded
DEFAULT_MAX_CONCURRENCY     4            ``execution.max_concurrency``, ``--max-concurrency``
DEFAULT_TIMEOUT_S           240.0        ``execution.request_timeout_s``, ``--request-timeout``
IDENTIFIER_PATTERN          (a regex)    ids that name trials, units and files: a letter or digit, then letters,
                                         digits, ``_``, ``.`` and ``-``
STRUCTURED_OUTPUT_MODES     (4 names)    how a reply's JSON is asked for (``execution.structured_output``)
==========================  ===========  ==============================================================

Examples
--------
>>> ANALYSIS_SEED, BOOTSTRAP_DRAWS, FAILURE_THRESHOLD
(20260729, 20000, 0.05)
"""
from __future__ import annotations

ANALYSIS_SEED = 20260729
"""PV-SST's analysis seed: the seed of every fresh generator of the statistics (bootstrap, sign-flip)."""
BOOTSTRAP_DRAWS = 20000
"""Percentile-bootstrap draws over blocks (PV-SST's)."""
SURVEY_BOOTSTRAP_DRAWS = 1000
"""Percentile-bootstrap draws of a survey's intervals (fidelity, cells, stated vs enacted)."""
FAILURE_THRESHOLD = 0.05
"""The share of failed model calls above which a unit is degraded (PV-SST's 5% parse-failure threshold)."""

IDENTIFIER_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"
"""Identifiers used in trial ids and file names: letters, digits, dot, dash and underscore."""

DEFAULT_MAX_CONCURRENCY = 4
"""Model calls in flight at once per gateway (per worker process) unless the document or an option says."""
DEFAULT_TIMEOUT_S = 240.0
"""Per-try timeout of a model call: long enough for a small model on CPU to write a post."""
STRUCTURED_OUTPUT_MODES = ("json_schema", "json_object", "json_mode", "none")
"""How a reply's JSON can be asked for (:mod:`pvsst.sim.llm.structured_modes`)."""
STRUCTURED_OUTPUT_AUTO = "auto"
"""The structured-output setting that probes a served model for the first mode it takes."""
