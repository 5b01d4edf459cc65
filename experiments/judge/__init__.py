"""``pvsst judge``: a run's posts read by a stance judge, as a run-kernel job."""
