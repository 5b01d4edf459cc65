"""Analysis of thread studies: shape, reply homophily, lexical convergence along paths, attribute inference.

Every function reads thread tables (``comments``, ``agents``, the attribute guesses) as frames; none
imports the engine.
"""
