"""Survey fidelity from a survey run store: the human data and the scoring."""
