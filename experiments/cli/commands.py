"""Command modules of the ``pvsst`` CLI; each exposes ``register(app)``."""
from __future__ import annotations

import importlib
import weakref

import typer

# One module per command group; each adds its commands / sub-apps to the root app.
COMMAND_MODULES = ("models", "llm", "simulate", "personas", "prereg", "run", "estimate", "stats",
                   "analyze", "judge", "report", "survey", "audit", "show", "materials", "verify")


# Apps already populated: ``main()`` calls register_all on every invocation (tests call it many times),
# and registering twice would duplicate every command and slow each later call.
_REGISTERED: weakref.WeakSet = weakref.WeakSet()


def register_all(app: typer.Typer) -> None:
    if app in _REGISTERED:
        return
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"pvsst.experiments.cli.{name}")
        module.register(app)
    _REGISTERED.add(app)
