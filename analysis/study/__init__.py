"""A study run: per-trial outcomes, the analysis pass of ``pvsst analyze``, its first-round audit, transcripts."""
