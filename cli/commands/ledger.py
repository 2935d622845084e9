"""`bench ledger …`: the ledger's DuckDB file, a fold of the event stream."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.commands import noun_app
from cli.output import confirm, stdout
from cli.session import session

app = noun_app("The ledger (DuckDB, folded from the event stream).")


@app.command("rebuild")
def rebuild(
    ctx: typer.Context,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Throw the ledger's tables away and fold the whole event stream again (POST /api/ledger/rebuild).

    Asks first on a terminal; elsewhere needs --yes.

    Example:

    \b
      bench ledger rebuild --yes
    """
    s = session(ctx)
    confirm("Rebuild the ledger from the event stream?", yes)
    with s.client() as client:
        reply = client.post("/api/ledger/rebuild")

    def human(data: Any) -> None:
        stdout.print(f"ledger rebuilt: {data.get('events', '?')} events in {data.get('seconds', '?')} s")

    s.emit(reply, human)
