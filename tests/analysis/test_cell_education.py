"""Education on both sides of a cell run: the CCES 2016 extract has a college-degree flag only, so the shipped
instrument's cells use `college` (bachelor's or more vs not), derived from education for census personas and
for respondents alike. Mapping flag 0 to high-school graduate left the oracle 42-55% of each state."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from pvsst.analysis.survey.cells.population import population_from_table
from pvsst.analysis.survey.cells.state_scores import cell_oracle
from pvsst.analysis.survey.cells.states import survey_respondents
from pvsst.analysis.survey.data import load_survey_table
from pvsst.experiments.survey.cell_population import asked_cells
from pvsst.personas.respondents import canonical_values
from pvsst.personas.synthesis import synthesize
from pvsst.personas.vocabulary import COLLEGE_FLAGS

INSTRUMENT = Path(__file__).resolve().parents[2] / "experiments" / "surveys" / "cces2016_vote.yaml"


def test_the_cces_oracle_covers_every_census_cell_of_every_state():
    spec = yaml.safe_load(INSTRUMENT.read_text())
    assert "college" in spec["cells"]["attributes"] and "education" not in spec["cells"]["attributes"]
    attributes = [a for a in spec["cells"]["attributes"] if a != "party"]  # party is drawn from CCES itself
    people = synthesize(5_000, geography="US", seed=4).personas
    asked, counts = asked_cells(people, attributes)
    assert set(asked["college"]) == set(COLLEGE_FLAGS)
    graduates = people["education"].isin(["bachelors_degree", "advanced_degree"]).sum()
    assert asked.loc[asked["college"] == "college degree", "population"].sum() == graduates
    population = population_from_table(counts)
    raw = load_survey_table(spec["data"]["source"])
    human = pd.DataFrame({"respondent_id": canonical_values(raw["uid"]), "weight": 1.0,
                          "votetrump": raw["votetrump"].map({1.0: "trump", 0.0: "another_candidate"}).to_numpy(object)})
    respondents = survey_respondents(spec, human)
    assert set(respondents["college"].dropna()) == set(COLLEGE_FLAGS)
    answered = respondents[respondents["votetrump"].notna()]
    _, coverage = cell_oracle(answered, attributes, "votetrump", ["trump", "another_candidate"], population.counts,
                              population.cells.drop(columns="count"))
    assert len(coverage) == 51 and np.allclose(coverage, 1.0, rtol=0, atol=1e-12)
