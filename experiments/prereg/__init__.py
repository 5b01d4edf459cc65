"""Preregistration: freezing a study spec or a survey instrument, and verifying it against its lock."""
