"""Survey figures: answer shares, fidelity by question, subgroup gaps, audits and state maps."""
