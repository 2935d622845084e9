"""One module per noun (`bench endpoint …`, `bench model …`) or top-level verb (`bench up`, `bench status`).
"""

from __future__ import annotations

import typer


def noun_app(help: str) -> typer.Typer:
    """A `bench <noun>` group, set up like every other one (plain click help; Rich only draws results)."""
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode=None, pretty_exceptions_enable=False)
