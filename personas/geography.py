"""U.S. states, their postal codes and their Census regions, and parsing of a ``--geography`` value.

Regions are the four U.S. Census Bureau regions (Census Bureau, "Census Regions and Divisions of the
United States"). Puerto Rico is not a Census region member and the race and education tables are
national 50-states-plus-DC figures, so the persona geography covers the 50 states and DC only.

Example
-------
>>> parse_geography("ca, New York")
('CA', 'NY')
>>> REGION_OF_STATE["TX"]
'South'
"""
from __future__ import annotations

from pvsst.core.errors import InputError

REGIONS: tuple[str, ...] = ("Northeast", "Midwest", "South", "West")

# (postal code, name, Census region)
_STATES: tuple[tuple[str, str, str], ...] = (
    ("AL", "Alabama", "South"), ("AK", "Alaska", "West"), ("AZ", "Arizona", "West"),
    ("AR", "Arkansas", "South"), ("CA", "California", "West"), ("CO", "Colorado", "West"),
    ("CT", "Connecticut", "Northeast"), ("DE", "Delaware", "South"),
    ("DC", "District of Columbia", "South"), ("FL", "Florida", "South"), ("GA", "Georgia", "South"),
    ("HI", "Hawaii", "West"), ("ID", "Idaho", "West"), ("IL", "Illinois", "Midwest"),
    ("IN", "Indiana", "Midwest"), ("IA", "Iowa", "Midwest"), ("KS", "Kansas", "Midwest"),
    ("KY", "Kentucky", "South"), ("LA", "Louisiana", "South"), ("ME", "Maine", "Northeast"),
    ("MD", "Maryland", "South"), ("MA", "Massachusetts", "Northeast"), ("MI", "Michigan", "Midwest"),
    ("MN", "Minnesota", "Midwest"), ("MS", "Mississippi", "South"), ("MO", "Missouri", "Midwest"),
    ("MT", "Montana", "West"), ("NE", "Nebraska", "Midwest"), ("NV", "Nevada", "West"),
    ("NH", "New Hampshire", "Northeast"), ("NJ", "New Jersey", "Northeast"),
    ("NM", "New Mexico", "West"), ("NY", "New York", "Northeast"),
    ("NC", "North Carolina", "South"), ("ND", "North Dakota", "Midwest"), ("OH", "Ohio", "Midwest"),
    ("OK", "Oklahoma", "South"), ("OR", "Oregon", "West"), ("PA", "Pennsylvania", "Northeast"),
    ("RI", "Rhode Island", "Northeast"), ("SC", "South Carolina", "South"),
    ("SD", "South Dakota", "Midwest"), ("TN", "Tennessee", "South"), ("TX", "Texas", "South"),
    ("UT", "Utah", "West"), ("VT", "Vermont", "Northeast"), ("VA", "Virginia", "South"),
    ("WA", "Washington", "West"), ("WV", "West Virginia", "South"), ("WI", "Wisconsin", "Midwest"),
    ("WY", "Wyoming", "West"),
)

STATE_CODES: tuple[str, ...] = tuple(code for code, _, _ in _STATES)
STATE_NAME: dict[str, str] = {code: name for code, name, _ in _STATES}
STATE_CODE_OF_NAME: dict[str, str] = {name: code for code, name, _ in _STATES}
REGION_OF_STATE: dict[str, str] = {code: region for code, _, region in _STATES}

_LOOKUP: dict[str, str] = {**{c.lower(): c for c in STATE_CODES},
                           **{n.lower(): c for c, n, _ in _STATES}}


def parse_geography(geography: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Return the state codes a geography covers, in the canonical (alphabetical by name) order.

    ``"US"`` (any case) is every state plus DC; otherwise a comma-separated list (or a list) of postal
    codes or full names, case-insensitive. An unknown state raises :class:`InputError`.

    Example
    -------
    >>> len(parse_geography("US"))
    51
    >>> parse_geography(["wy", "Alaska"])
    ('AK', 'WY')
    """
    parts = geography.split(",") if isinstance(geography, str) else list(geography)
    parts = [str(p).strip() for p in parts if str(p).strip()]
    if not parts:
        raise InputError("geography", "geography", "empty: give US or state codes/names")
    if len(parts) == 1 and parts[0].upper() in ("US", "USA", "UNITED STATES"):
        return STATE_CODES
    codes = set()
    for part in parts:
        code = _LOOKUP.get(part.lower())
        if code is None:
            raise InputError("geography", "state", f"unknown state {part!r} (use a postal code such "
                             "as CA or a name such as California; 50 states and DC)")
        codes.add(code)
    return tuple(c for c in STATE_CODES if c in codes)
