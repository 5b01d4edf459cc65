"""Statistics on paired blocks: the analysis plan, the block tests, paired contrasts and the preregistered decisions."""
