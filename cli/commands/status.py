"""`bench status`: what the server at the URL holds (GET /api/status)."""

from __future__ import annotations

from typing import Any

import typer

from cli.output import stdout
from cli.session import session


def summary(url: str, data: dict[str, Any]) -> str:
    auth = "admin token set" if data.get("auth") else "no admin token"
    keys = "keys required" if data.get("keys_required") else "keys not required"
    default = data.get("default_endpoint") or "none"
    return (f"{url}: up (benchwarmers {data.get('version')}); OpenAI base URL {data.get('gateway')}\n"
            f"{data.get('models')} models ({data.get('retired')} retired), {data.get('collections')} "
            f"collections, {data.get('endpoints')} endpoints (default {default})\n"
            f"{auth}, {keys}, {data.get('gateway_keys')} gateway keys; scheduler {data.get('scheduler')}; "
            f"data in {data.get('data')}")


def status(ctx: typer.Context) -> None:
    """Show what the server holds: models, collections, endpoints, who may call.

    Exit 3 when nothing answers at the URL.

    Example:

    \b
      bench --url http://127.0.0.1:8122 status
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/api/status")
    s.emit(reply, lambda data: stdout.print(summary(s.url, data), markup=False))
