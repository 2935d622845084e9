"""`bench alerts` and `bench alert …`: what needs your attention (SPEC C-16), and the free-tier guard's
allow list (U-5). A `went paid` alert (`model:paid:<served>`) stops every caller calling that served id
until it is cleared, unless the allow list names the model."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

import typer

from cli.commands import noun_app
from cli.commands.collection import split_list
from cli.output import record_table, rows_table, say, show
from cli.session import session

app = noun_app("Alerts (C-16) and the free-tier guard's allow list (U-5).")
COLUMNS = ("key", "kind", "message", "action", "alias", "last_seen", "by")


def alerts(ctx: typer.Context) -> None:
    """List the active alerts, the most recently seen first (GET /api/alerts).

    Example:

    \b
      bench alerts
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/api/alerts")

    def human(data: Any) -> None:
        rows = data.get("alerts") or []
        if rows:
            show(rows_table("alerts", COLUMNS, rows))
        else:
            say("no alerts")

    s.emit(reply, human)


@app.command("raise")
def raise_alert(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="model:paid:<served>, model:pending:<served>, "
                                            "connection:held:<connection>, …")],
    message: Annotated[str, typer.Option(help="What is wrong, one line.")],
    kind: Annotated[str | None, typer.Option(help="retiring, connection, went paid, registration, "
                                                  "retired or plan (default: the key's own).")] = None,
    action: Annotated[str | None, typer.Option(help="What to do about it.")] = None,
    alias: Annotated[str | None, typer.Option(help="The model it is about.")] = None,
    aliases: Annotated[str | None, typer.Option(help="Models it concerns, comma-separated.")] = None,
) -> None:
    """Raise an alert, or raise it again (POST /api/alerts). A went-paid alert holds the model.

    Example:

    \b
      bench alert raise model:paid:vendor/fast:free --alias fast \\
        --message "listed with a price now" --action "retire it or re-point it at a free slug"
    """
    body: dict[str, Any] = {"key": key, "message": message}
    for name, value in (("kind", kind), ("action", action), ("alias", alias)):
        if value is not None:
            body[name] = value
    if aliases is not None:
        body["aliases"] = split_list(aliases)
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/alerts", body)
    s.emit(reply, lambda data: show(record_table(f"alert {key}", data.get("alert") or {})))


@app.command("clear")
def clear(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="The alert's key, as `bench alerts` shows it.")],
) -> None:
    """Clear an alert (DELETE /api/alerts/KEY); a cleared went-paid alert lets the model be called again.

    Example:

    \b
      bench alert clear model:paid:vendor/fast:free
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.request("DELETE", "/api/alerts/" + quote(key, safe=":/"))
    s.emit(reply, lambda data: say(f"cleared {data.get('cleared', key)}"))


@app.command("allow-paid")
def allow_paid(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(
        help="Aliases or served ids to call even on a went-paid alert; replaces the list.")] = None,
    none: Annotated[bool, typer.Option("--none", help="Empty the list: the guard holds them all.")] = False,
) -> None:
    """Show, or replace, the models the free-tier guard lets through (GET/POST /api/allow-paid).
    A caller started with BENCH_ALLOW_PAID=1 lets every model through.

    Example:

    \b
      bench alert allow-paid fast vendor/other:free
      bench alert allow-paid --none
    """
    if names and none:
        raise typer.BadParameter("give names or --none, not both", param_hint="--none")
    s = session(ctx)
    with s.client() as client:
        if names or none:
            reply = client.post("/api/allow-paid", {"allow_paid": list(names or [])})
        else:
            reply = client.get("/api/allow-paid")
    s.emit(reply, lambda data: say("allowed when priced: " + (", ".join(data.get("allow_paid") or [])
                                                              or "none")))
