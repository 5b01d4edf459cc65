"""Counterfactual audits: matched persona sets over varied attributes, and a study's first-round audit job."""
