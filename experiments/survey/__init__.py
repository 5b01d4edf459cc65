"""Survey simulation: the instrument spec, prompts, personas, the runner and its reference controls.

Importing the package registers the reference controls (``scripted/oracle``, ``scripted/marginal``,
``scripted/uniform``) with the gateway's provider registry, in every process that runs survey units.
"""
from pvsst.experiments.survey import controls as _controls  # noqa: F401  (registers the controls)
