"""pvsst: preregistered LLM-agent social simulation.

The packages import as ``pvsst.sim``, ``pvsst.personas``, ``pvsst.experiments`` and
``pvsst.analysis``; ``pvsst.core`` holds what every one of them may import.

For notebooks, :func:`open_run` (from :mod:`pvsst.analysis.store.reader`) opens a run directory as pandas
frames: its manifest, the tables of its complete trials or survey units and its analysis outputs.

Examples
--------
>>> import pvsst
>>> pvsst.open_run.__module__
'pvsst.analysis.store.reader'
"""
import importlib

# Lazy: `import pvsst.experiments.cli` (every `pvsst` command) imports this package first and must not
# pull in pandas for it.
_EXPORTS = {"open_run": "pvsst.analysis.store.reader", "RunTables": "pvsst.analysis.store.reader"}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'pvsst' has no attribute {name!r}")
