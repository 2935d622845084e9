"""`bench status`: is a server answering at the URL?"""

from __future__ import annotations

from typing import Any

import typer

from cli.output import stdout
from cli.session import session


def status(ctx: typer.Context) -> None:
    """Check that the server answers (GET /health).

    Exit 3 when nothing answers at the URL.

    Example:

    \b
      bench --url http://127.0.0.1:8122 status
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/health")

    def human(data: Any) -> None:
        ok = isinstance(data, dict) and data.get("ok") is True
        stdout.print(f"{s.url}: {'up' if ok else 'answering, but not ok'}", markup=False)
        if not ok:
            raise typer.Exit(1)

    s.emit(reply, human)
