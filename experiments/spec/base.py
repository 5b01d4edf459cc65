"""Shared pieces of the study-spec schema: factor names.

The strict base model, the field-addressed error and the common field types are defined in
:mod:`pvsst.core.validation` (the analysis plan, :mod:`pvsst.analysis.stats.plan`, is built from them too) and
re-exported here for the spec modules.
"""
from __future__ import annotations

from pvsst.core.validation import (
                                IDENTIFIER_PATTERN,
                                Identifier,
                                NonEmptyText,
                                Share,
                                SpecFieldError,
                                StrictModel,
                                first_duplicate,
                                join_field,
)

__all__ = ["IDENTIFIER_PATTERN", "Identifier", "NonEmptyText", "Share", "SpecFieldError", "StrictModel",
           "first_duplicate", "FACTOR_COLUMNS", "join_field"]

FACTOR_COLUMNS = ("model", "topic_id", "seed", "condition")
"""Trial-table columns that name a factor; block keys and run orders are written in these names."""
