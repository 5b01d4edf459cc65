"""pvsst: preregistered LLM-agent social simulation.

The packages import as ``pvsst.sim``, ``pvsst.personas``, ``pvsst.experiments`` and
``pvsst.analysis``; ``pvsst.core`` holds what every one of them may import.
"""
