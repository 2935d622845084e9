"""`bench limits …`: your own rate limits per connection or per model (SPEC L-1 (a), (b)). Saving replaces
that scope's limits: an axis not given has no limit of yours."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.commands import noun_app
from cli.output import record_table, rows_table, show
from cli.session import session

app = noun_app("Your rate limits per connection or model.")
Axis = Annotated[int | None, typer.Option(min=1)]


@app.command("show")
def show_all(ctx: typer.Context) -> None:
    """List each connection with its models and limits, and each model's own limits (GET /api/connections).

    Example:

    \b
      bench limits show
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/api/connections")

    def human(data: Any) -> None:
        show(rows_table("connections", ("name", "models", "limits"), data.get("connections") or []))
        if data.get("models"):
            show(rows_table("models", ("alias", "limits"), data["models"]))

    s.emit(reply, human)


def save(ctx: typer.Context, path: str, body: dict[str, Any]) -> None:
    s = session(ctx)
    with s.client() as client:
        reply = client.post(path, body)
    s.emit(reply, lambda data: show(record_table(f"{data.get('scope')} {data.get('name')}",
                                                 data.get("limits") or {})))


@app.command("connection")
def connection(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The connection (an endpoint name).")],
    rpm: Axis = None, rpd: Axis = None, tpm: Axis = None, tpd: Axis = None,
    rpmo: Annotated[int | None, typer.Option(min=1, help="Requests a calendar month.")] = None,
) -> None:
    """Set a connection's limits, shared by every model on it (POST /api/connection-limits).

    Example:

    \b
      bench limits connection groq --rpm 30 --rpd 1000
    """
    limits = {"rpm": rpm, "rpd": rpd, "tpm": tpm, "tpd": tpd, "rpmo": rpmo}
    save(ctx, "/api/connection-limits", {"connection": name, "limits": limits})


@app.command("model")
def model(
    ctx: typer.Context,
    alias: Annotated[str, typer.Argument(help="The model's alias.")],
    rpm: Axis = None, rpd: Axis = None, tpm: Axis = None, tpd: Axis = None,
) -> None:
    """Set one model's own limits (POST /api/model-limits).

    Example:

    \b
      bench limits model llama-70b --rpm 10
    """
    limits = {"rpm": rpm, "rpd": rpd, "tpm": tpm, "tpd": tpd}
    save(ctx, "/api/model-limits", {"alias": alias, "limits": limits})
