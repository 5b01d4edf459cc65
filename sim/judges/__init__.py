"""Stance judges: read a post and return one of the seven stance labels for the trial's topic."""
