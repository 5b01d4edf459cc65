"""Census marginals vendored in ``personas/data/census`` (see its SOURCES.md), loaded and checked.

Sources (U.S. Census Bureau, public domain):

- ACS 2024 1-year, table S0101 (Age and Sex), United States and each state: persons by sex and
  five-year age band (``acs2024_1yr_s0101_us.csv``, ``acs2024_1yr_s0101_states.csv``).
- 2023 National Population Projections, main series, year 2024: persons by race / Hispanic origin,
  sex and single year of age (``np2023_2024_race_sex_single_age.csv``).
- CPS 2022 ASEC: educational attainment of adults 25 and over, percent
  (``education_25plus_cps2022.csv``).
- Vintage 2023 population estimates by state (``v2023_population_by_state.csv``): vendored with the
  rest, not used by the raking (the ACS 2024 tables are the state targets).

Approximations (each also stated in the fit report's ``source`` column):

- Adults 18-19: ACS S0101 has no 18-19 line for states. The 15-19 band of each state is split by the
  national ACS 2024 share of 18-19 year olds within 15-19, per sex (national lines 005 "15 to 19"
  minus 021 "15 to 17"). Nationally this is exact, and the states still sum to the nation.
- Race / ethnicity: the projections give Hispanic (any race), non-Hispanic White alone, and "alone"
  races that include Hispanic members. Non-Hispanic Black, Asian and other are the non-Hispanic
  remainder (non-Hispanic minus non-Hispanic White alone) split in proportion to the Black alone,
  Asian alone and (AIAN alone + NHPI alone + two or more races) counts. Race shares are national,
  conditional on age band and sex, and applied to every geography (no state race table is vendored).
- Race of Hispanic adults (the race phrase beside a Hispanic flag): Hispanic White is exact (White
  alone minus non-Hispanic White alone); Hispanic Black, Asian and other are each "alone" count minus
  its non-Hispanic estimate above, which gives every non-White race the same Hispanic share (8.8% of
  adults). Race given Hispanic origin is national, by age band and sex.
- Education: the CPS percentages are rounded by the source (they sum to 99); they are normalised to
  sum to 1 and target adults 25 and over only.

Example
-------
>>> tables = load_census_tables()
>>> round(float(tables.state_age_sex.sum()) / 1e6, 1)   # U.S. adults 18+, millions (ACS line 026)
267.2
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from pvsst.core.errors import InputError
from pvsst.personas.geography import STATE_CODE_OF_NAME, STATE_CODES
from pvsst.personas.vocabulary import AGE_BAND_LOWER, AGE_BANDS, EDUCATION_LEVELS, RACE_ETHNICITIES, RACES, SEXES

US_FILE = "acs2024_1yr_s0101_us.csv"
STATES_FILE = "acs2024_1yr_s0101_states.csv"
RACE_FILE = "np2023_2024_race_sex_single_age.csv"
EDUCATION_FILE = "education_25plus_cps2022.csv"

SOURCE_AGE_SEX = "ACS 2024 1-year S0101 (18-19 split off 15-19 by the national ACS share)"
SOURCE_RACE = ("2023 National Population Projections, 2024 (non-Hispanic remainder split in "
               "proportion to alone races)")
SOURCE_EDUCATION = "CPS 2022 ASEC educational attainment, adults 25+ (normalised)"
SOURCE_HISPANIC_RACE = ("2023 National Population Projections, 2024 (Hispanic = alone race minus its "
                        "non-Hispanic estimate; White exact)")

# S0101 lines of the adult five-year bands 20-24 .. 85+ (line 005 = 15-19 is split separately).
_BAND_LINES = tuple(range(6, 20))
_LINE_15_19, _LINE_15_17 = 5, 21


@dataclass(frozen=True)
class CensusTables:
    """Checked census targets.

    Attributes
    ----------
    state_age_sex : ndarray, shape (51, 15, 2)
        Adults by state (:data:`pvsst.personas.geography.STATE_CODES` order), age band and sex.
    race_given_age_sex : ndarray, shape (5, 15, 2)
        P(race / ethnicity | age band, sex), national; sums to 1 over axis 0.
    education_shares : ndarray, shape (6,)
        Shares of adults 25+ by :data:`pvsst.personas.vocabulary.EDUCATION_LEVELS`; sums to 1.
    single_age_given_band_sex : ndarray, shape (15, 2, 5)
        P(exact age = lower bound + k | band, sex) from the projections (85+ band: all mass at k=0).
    race_given_hispanic_age_sex : ndarray, shape (4, 15, 2)
        P(race | Hispanic, age band, sex) over :data:`pvsst.personas.vocabulary.RACES`, national; sums
        to 1 over axis 0.
    """

    state_age_sex: np.ndarray
    race_given_age_sex: np.ndarray
    education_shares: np.ndarray
    single_age_given_band_sex: np.ndarray
    race_given_hispanic_age_sex: np.ndarray


def census_dir_default() -> Path:
    """The vendored census directory inside the installed package."""
    return Path(str(resources.files("pvsst.personas") / "data" / "census"))


def _read_csv(path: Path, required: tuple[str, ...]) -> pd.DataFrame:
    if not path.is_file():
        raise InputError(str(path), "file", "missing census marginal file")
    try:
        frame = pd.read_csv(path, dtype=str)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise InputError(str(path), "file", f"not a readable CSV ({type(err).__name__})") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(str(path), "columns", f"missing column(s) {', '.join(missing)}")
    return frame


def _counts(frame: pd.DataFrame, columns, path: Path) -> np.ndarray:
    values = np.column_stack([pd.to_numeric(frame[c].to_numpy(dtype=object), errors="coerce")
                              for c in columns]).astype(float)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise InputError(str(path), str(list(columns)[col]),
                         f"row {row + 2}: expected a non-negative count, got {frame.iloc[row][list(columns)[col]]!r}")
    return values


def _rows_by_line(frame: pd.DataFrame, values: np.ndarray, path: Path, lines, where: str) -> np.ndarray:
    """(len(lines), ...) rows of ``values`` for the given S0101 line numbers, each present once."""
    line_no = pd.to_numeric(frame["line"], errors="coerce").to_numpy()
    out = []
    for line in lines:
        hits = np.flatnonzero(line_no == line)
        if hits.size != 1:
            raise InputError(str(path), "line",
                             f"{where}: expected exactly one row for line {line:03d}, found {hits.size}")
        out.append(values[hits[0]])
    return np.array(out)


def _share_18_19_within_15_19(census_dir: Path) -> np.ndarray:
    path = census_dir / US_FILE
    frame = _read_csv(path, ("line", "label", "total", "male", "female"))
    head = frame[pd.to_numeric(frame["line"], errors="coerce").isin([_LINE_15_19, _LINE_15_17])]
    counts = _rows_by_line(head, _counts(head, ("male", "female"), path), path,
                           (_LINE_15_19, _LINE_15_17), "United States")
    if np.any(counts[0] <= 0) or np.any(counts[1] > counts[0]):
        raise InputError(str(path), "line", "15-17 must not exceed the positive 15-19 count")
    return (counts[0] - counts[1]) / counts[0]


def _state_age_sex(census_dir: Path, share_18_19: np.ndarray) -> np.ndarray:
    path = census_dir / STATES_FILE
    frame = _read_csv(path, ("state", "line", "male", "female"))
    values = _counts(frame, ("male", "female"), path)
    out = np.zeros((len(STATE_CODES), len(AGE_BANDS), len(SEXES)))
    for name, index in frame.groupby("state", sort=False).indices.items():
        code = STATE_CODE_OF_NAME.get(str(name))
        if code is None:   # Puerto Rico is in the file but not a persona geography
            continue
        rows = _rows_by_line(frame.iloc[index], values[index], path, (_LINE_15_19,) + _BAND_LINES, str(name))
        s = STATE_CODES.index(code)
        out[s, 0] = rows[0] * share_18_19
        out[s, 1:] = rows[1:]
    missing = [STATE_CODES[s] for s in range(len(STATE_CODES)) if out[s].sum() == 0]
    if missing:
        raise InputError(str(path), "state", f"no rows for {', '.join(missing)}")
    return out


def _single_age(census_dir: Path):
    path = census_dir / RACE_FILE
    ages = list(range(18, 86))
    cols = tuple(f"POP_{a}" for a in ages)
    frame = _read_csv(path, ("race_hisp", "sex") + cols)
    values = _counts(frame, cols, path)
    table = {}
    for key, index in frame.groupby(["race_hisp", "sex"], sort=False).indices.items():
        table[key] = values[index].sum(axis=0)
    needed = ("hispanic", "nh_white_alone", "white_alone", "non_hispanic", "black_alone", "asian_alone",
              "aian_alone", "nhpi_alone", "two_or_more", "total")
    for race in needed:
        for sex in SEXES:
            if (race, sex) not in table:
                raise InputError(str(path), "race_hisp", f"missing row {race}/{sex}")
    by_race = np.zeros((len(RACE_ETHNICITIES), len(SEXES), len(ages)))
    hispanic_by_race = np.zeros((len(RACES), len(SEXES), len(ages)))
    for j, sex in enumerate(SEXES):
        t = {race: table[(race, sex)] for race in needed}
        remainder = t["non_hispanic"] - t["nh_white_alone"]
        alone = {"black": t["black_alone"], "asian": t["asian_alone"],
                 "other": t["aian_alone"] + t["nhpi_alone"] + t["two_or_more"]}
        alone_total = sum(alone.values())
        if np.any(remainder < 0) or np.any(alone_total <= 0):
            raise InputError(str(path), "race_hisp", "non-Hispanic totals are inconsistent")
        by_race[0, j], by_race[1, j] = t["hispanic"], t["nh_white_alone"]
        for i, race in enumerate(("black", "asian", "other"), start=2):
            by_race[i, j] = remainder * alone[race] / alone_total
        hispanic_by_race[RACES.index("white"), j] = t["white_alone"] - t["nh_white_alone"]
        for race in ("black", "asian", "other"):
            hispanic_by_race[RACES.index(race), j] = alone[race] - by_race[RACE_ETHNICITIES.index(race), j]
        if np.any(hispanic_by_race[:, j] < 0):
            raise InputError(str(path), "race_hisp", "an alone race count is below its non-Hispanic part")
    band = np.searchsorted(AGE_BAND_LOWER, ages, side="right") - 1
    race_band = np.zeros((len(RACE_ETHNICITIES), len(AGE_BANDS), len(SEXES)))
    hispanic_band = np.zeros((len(RACES), len(AGE_BANDS), len(SEXES)))
    single = np.zeros((len(AGE_BANDS), len(SEXES), 5))
    for k, age in enumerate(ages):
        race_band[:, band[k], :] += by_race[:, :, k]
        hispanic_band[:, band[k], :] += hispanic_by_race[:, :, k]
        single[band[k], :, age - AGE_BAND_LOWER[band[k]]] += by_race[:, :, k].sum(axis=0)
    race_given = race_band / race_band.sum(axis=0, keepdims=True)
    single /= single.sum(axis=2, keepdims=True)
    return race_given, single, hispanic_band / hispanic_band.sum(axis=0, keepdims=True)


def _education_shares(census_dir: Path) -> np.ndarray:
    path = census_dir / EDUCATION_FILE
    frame = _read_csv(path, ("level", "percent"))
    levels = frame["level"].tolist()
    if sorted(levels) != sorted(EDUCATION_LEVELS):
        raise InputError(str(path), "level", f"expected levels {', '.join(EDUCATION_LEVELS)}")
    percent = _counts(frame, ("percent",), path)[:, 0]
    total = percent.sum()
    if not 95 <= total <= 105:
        raise InputError(str(path), "percent", f"percentages sum to {total:g}, expected about 100")
    shares = np.array([percent[levels.index(level)] for level in EDUCATION_LEVELS])
    return shares / total


def load_census_tables(census_dir: str | Path | None = None) -> CensusTables:
    """Load and check the census marginals: the vendored copy (read once per process, its arrays
    read-only: it cannot change while pvsst runs) unless ``census_dir`` is given (read every time).

    A missing, unreadable or inconsistent file raises :class:`pvsst.core.errors.InputError`.

    Example
    -------
    >>> t = load_census_tables()
    >>> t.state_age_sex.shape, round(float(t.education_shares.sum()), 12)
    ((51, 15, 2), 1.0)
    """
    if census_dir is None:
        return _vendored_census_tables()
    return _read_census_tables(Path(census_dir))


@lru_cache(maxsize=1)
def _vendored_census_tables() -> CensusTables:
    tables = _read_census_tables(census_dir_default())
    for field in fields(tables):
        getattr(tables, field.name).setflags(write=False)
    return tables


def _read_census_tables(directory: Path) -> CensusTables:
    share_18_19 = _share_18_19_within_15_19(directory)
    race_given, single, hispanic_race = _single_age(directory)
    return CensusTables(state_age_sex=_state_age_sex(directory, share_18_19),
                        race_given_age_sex=race_given,
                        education_shares=_education_shares(directory),
                        single_age_given_band_sex=single,
                        race_given_hispanic_age_sex=hispanic_race)
