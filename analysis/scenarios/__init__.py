"""Scenario studies: how much each factor explains a yes / no decision, and agreement within households."""
