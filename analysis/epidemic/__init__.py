"""An epidemic run's tables: its region-day rows over replicates and the per-region summary."""
