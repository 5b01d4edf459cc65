"""The gateway options of a command, from the one table (:data:`pvsst.core.gateway_options.GATEWAY_OPTIONS`).

:func:`gateway_options` adds the table's options (all, or the fields named) to a command function: each
is one field of :class:`~pvsst.sim.llm.config.GatewayConfig`, with its default and bounds there (a value
out of bounds is one line naming the option's field). The function receives the options given as one
``gateway`` dict (field -> value; the options not given are left out), which the run applies to the
document's ``execution`` section with :meth:`~pvsst.sim.llm.config.GatewayConfig.with_options` and
records in the run's manifest as a deviation. Model servers (``endpoints``) come only from the document.

Examples
--------
>>> @gateway_options("max_concurrency", "api_base")
... def command(spec: str, gateway: dict) -> dict:
...     return gateway
>>> list(inspect.signature(command).parameters)
['spec', 'max_concurrency', 'api_base']
>>> command("s.yaml", max_concurrency=2, api_base=None)
{'max_concurrency': 2}
"""
from __future__ import annotations

import functools
import inspect
from typing import Optional

import typer

from pvsst.core.gateway_options import GATEWAY_OPTIONS


def gateway_options(*fields: str):
    """A decorator adding the gateway options of ``fields`` (default: every one) to a command whose last
    parameter is ``gateway``."""
    chosen = [option for option in GATEWAY_OPTIONS if not fields or option.field in fields]

    def decorate(command):
        signature = inspect.signature(command)
        kept = [p for p in signature.parameters.values() if p.name != "gateway"]
        added = [inspect.Parameter(option.field, inspect.Parameter.KEYWORD_ONLY, annotation=Optional[option.type],
                                   default=typer.Option(None, option.flag, help=option.help)) for option in chosen]

        @functools.wraps(command)
        def with_options(*args, **kwargs):
            given = {option.field: kwargs.pop(option.field, None) for option in chosen}
            return command(*args, gateway={k: v for k, v in given.items() if v is not None}, **kwargs)

        with_options.__signature__ = signature.replace(parameters=[*kept, *added])
        return with_options

    return decorate
