"""Cell cards: a persona card that prints only the attributes defining the persona's cell.

Every persona of a cell (:mod:`pvsst.personas.cells`) gets the identical card, hence the identical prompt,
so one request answers the whole cell. Templates are versioned files ``personas/templates/cell_vN.txt``
(``string.Template`` with the single field ``traits``), checked like every card template
(:func:`pvsst.personas.cards.check_template`); a released version is never edited.

``traits`` is one phrase per cell attribute, in the order the cell definition lists them, joined with
``"; "``. Known persona attributes get the wording of the other cards (:mod:`pvsst.personas.cards`); any other
column prints as ``name: value`` (underscores as spaces).

Examples
--------
>>> render_cell_card({"age_band": "35-39", "sex": "female", "party_id": "Lean Democrat",
...                   "state": "OH"}, ["age_band", "sex", "party_id", "state"])
'A U.S. adult with these characteristics: aged 35-39; a woman; an independent who leans Democratic; living in Ohio.'
>>> render_cell_card({"age_group_50": "under 50", "hispanic_origin": "Hispanic", "race": "white",
...                   "household_income_band": "$70,000 or more"},
...                  ["age_group_50", "hispanic_origin", "race", "household_income_band"])
'A U.S. adult with these characteristics: younger than 50; of Hispanic or Latino origin; race: White; household \
income: $70,000 or more a year.'
>>> render_cell_card({"union_member": "yes"}, ["union_member"])
'A U.S. adult with these characteristics: union member: yes.'
"""
from __future__ import annotations

import re
import string
from functools import lru_cache
from importlib import resources

import pandas as pd

from pvsst.core.errors import InputError
from pvsst.personas.cards import _EDUCATION, _PARTY, _RACE, check_template
from pvsst.personas.cells import CellTable
from pvsst.personas.geography import STATE_NAME

CELL_FIELDS = frozenset({"traits"})
CELL_STYLE = "cell"


def _phrase(attribute: str, value) -> str:
    value = str(value)
    if attribute == "age_band":
        return "aged 85 or older" if value == "85+" else f"aged {value}"
    if attribute in ("age_group",):
        return "aged 75 or older" if value == "75+" else f"aged {value}"
    if attribute == "sex":
        return {"female": "a woman", "male": "a man"}.get(value, f"sex: {value}")
    if attribute == "race_ethnicity":
        return f"race / ethnicity: {_RACE.get(value, value)}"
    if attribute == "education":
        return f"education: {_EDUCATION.get(value, value)}"
    if attribute == "college":
        return {"college degree": "with a college degree", "no college degree": "without a college degree"}.get(
            value, f"college: {value}")
    if attribute in ("state", "state_name"):
        return f"living in {STATE_NAME.get(value, value)}"
    if attribute == "region":
        return f"living in the {value} (Census region)"
    if attribute == "income_band":
        return f"personal income: {value}" + (" a year" if value.startswith(("$", "under")) else "")
    if attribute == "household_income_band":
        return f"household income: {value} a year"
    if attribute == "hispanic_origin":
        return {"Hispanic": "of Hispanic or Latino origin"}.get(value, "not of Hispanic or Latino origin")
    if attribute == "race":
        return f"race: {value.capitalize()}"
    if attribute == "age_group_50":
        return {"under 50": "younger than 50"}.get(value, f"aged {value}")
    if attribute == "education_group":
        return f"education: {value}"
    if attribute == "party_id":
        return _PARTY.get(value, "a supporter of another party or undecided")
    if attribute == "party":
        return {"Other": "party: another party or none"}.get(value, f"party: {value}")
    if attribute == "ideology":
        return "not sure where they stand between liberal and conservative" if value == "not sure" \
            else f"ideology: {value}"
    if attribute == "religiosity":
        return f"religion is {value} to them"
    return f"{attribute.replace('_', ' ')}: {value}"


@lru_cache(maxsize=None)
def load_cell_template(version: int | None = None) -> tuple[str, string.Template]:
    """(style name ``cell_vN``, checked template) of a version; ``None``: the latest.

    Examples
    --------
    >>> load_cell_template()[0]
    'cell_v1'
    """
    names = [p.name for p in resources.files("pvsst.personas").joinpath("templates").iterdir()]
    versions = sorted(int(m.group(1)) for n in names if (m := re.fullmatch(r"cell_v(\d+)\.txt", n)))
    if version is None:
        version = versions[-1]
    if version not in versions:
        raise InputError("cards", "style", f"unknown cell card version {version!r}; available: "
                         + ", ".join(f"cell_v{v}" for v in versions))
    style = f"{CELL_STYLE}_v{version}"
    text = resources.files("pvsst.personas").joinpath("templates", f"{style}.txt").read_text(encoding="utf-8").strip()
    template = string.Template(text)
    check_template(template, style, CELL_FIELDS)
    return style, template


def render_cell_card(values: dict, attributes, version: int | None = None) -> str:
    """The card of the cell with attribute ``values`` (a dict or row), printing ``attributes`` in order."""
    _, template = load_cell_template(version)
    traits = "; ".join(_phrase(str(a), values[a]) for a in attributes)
    return template.substitute(traits=traits)


def cell_cards(table: CellTable, version: int | None = None) -> pd.DataFrame:
    """One card per cell: ``cell_id``, ``card``, ``card_style`` (rendered once per cell, not per persona).

    Examples
    --------
    >>> import pandas as pd
    >>> from pvsst.personas.cells import cell_table
    >>> people = pd.DataFrame({"persona_id": ["a", "b", "c"], "sex": ["female", "male", "female"],
    ...                        "state": ["OH", "OH", "TX"]})
    >>> cell_cards(cell_table(people, ["sex"]))["card"].tolist()
    ['A U.S. adult with these characteristics: a woman.', 'A U.S. adult with these characteristics: a man.']
    """
    style, _ = load_cell_template(version)
    rows = table.cells[list(table.attributes)].to_dict("records")
    return pd.DataFrame({"cell_id": table.cells["cell_id"].to_numpy(),
                         "card": [render_cell_card(r, table.attributes, version) for r in rows],
                         "card_style": style})


def persona_cell_cards(table: CellTable, version: int | None = None) -> pd.DataFrame:
    """The card of every persona (``persona_id``, ``cell_id``, ``card``): its cell's card.

    Examples
    --------
    >>> from pvsst.personas.cells import cell_table
    >>> from pvsst.personas.synthesis import synthesize
    >>> cards = persona_cell_cards(cell_table(synthesize(200, geography="OH", seed=1).personas, ["sex", "region"]))
    >>> len(cards), cards["card"].nunique()
    (200, 2)
    """
    cards = cell_cards(table, version).set_index("cell_id")["card"]
    out = table.persona_cell.copy()
    out["card"] = cards.reindex(out["cell_id"].astype(str)).to_numpy()
    return out
