"""pvsst.personas: census tables -> raked population -> persona records -> persona cards.

Public API:

- :func:`synthesize` (``pvsst.personas.synthesis``): N census-raked adult personas for the U.S. or states,
  with a fit report.
- :func:`write_personas`, :func:`read_personas`, :class:`PersonaRecord` (``pvsst.personas.records``).
- :func:`personas_for_simulation`, :func:`render_card` (``pvsst.personas.cards``): card, label, posting style.
- :func:`matched_personas` (``pvsst.personas.respondents``): one persona per respondent of any survey, through
  a column -> attribute mapping; :func:`respondent_personas`: its GSS 2018 instance.

Sources and every approximation are documented in the module docstrings and in
``personas/data/census/SOURCES.md``.
"""
import importlib

# Lazy re-exports: every import of a submodule runs this file first, and must not pull in the other
# submodules (and pandas, pyarrow) with it.
_EXPORTS = {"synthesize": "synthesis", "SynthesisResult": "synthesis", "write_personas": "records",
            "read_personas": "records", "PersonaRecord": "records",
            "personas_for_simulation": "cards", "render_card": "cards",
            "respondent_personas": "respondents", "matched_personas": "respondents"}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"pvsst.personas.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'pvsst.personas' has no attribute {name!r}")
