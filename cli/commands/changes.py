"""`bench changes`: the change log (SPEC C-17): who changed what, newest first; never a secret."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.output import rows_table, show
from cli.session import session


def changes(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=1, max=5000, help="How many changes.")] = 50,
) -> None:
    """Show the latest configuration changes (GET /api/changes).

    Example:

    \b
      bench changes --limit 20
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get(f"/api/changes?limit={limit}")
    columns = ("at", "by", "kind", "name", "field", "old", "new")
    s.emit(reply, lambda data: show(rows_table("changes", columns, data.get("changes") or [])))
