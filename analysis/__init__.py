"""pvsst.analysis: reads a run store (or a per-trial table) and computes outcomes, statistics and figures.

Never imports ``sim`` or ``experiments``.
"""
