"""The ``pvsst`` command groups: typer apps that print plain help and answer ``--help`` without importing pydantic.

Every group of the command line (``pvsst``, ``pvsst survey``, ``pvsst prereg`` ...) is made by
:func:`command_group`: plain click help (rich's help screens take ~0.5 s to import) and the
:class:`QuickHelpGroup` class.

Examples
--------
>>> group = command_group("Things.")
>>> group.info.help, group.info.cls is QuickHelpGroup, group.rich_markup_mode is None
('Things.', True, True)
"""
from __future__ import annotations

import typer
from typer.core import TyperGroup


class QuickHelpGroup(TyperGroup):
    """A typer group whose ``--help`` flag defaults to ``False``.

    Typer leaves a group's unused ``--help`` flag at ``None`` and converts that value through pydantic
    (~0.3 s of imports) before the command runs; a ``False`` default is a bool, which it leaves as it is.
    """

    def get_help_option(self, ctx):
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False
        return option


def command_group(help: str, **settings) -> typer.Typer:  # noqa: A002 - typer's word
    """A typer app for a group of commands (``no_args_is_help``: the group alone prints its help)."""
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode=None, cls=QuickHelpGroup,
                       add_completion=False, pretty_exceptions_enable=False, **settings)
