"""`bench catalog status|refresh` and `bench discover`: the public feeds the model facts come from (SPEC
CAT-1, CAT-2), and the models worth adding (CAT-4)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.commands import noun_app
from cli.output import rows_table, say, show
from cli.session import session

app = noun_app("The model catalog: public feeds that fill in model facts (CAT-1, CAT-2).")
FEED_COLUMNS = ("feed", "source", "models", "age", "tried", "error")
ROW_COLUMNS = ("provider", "model", "free", "new", "reach", "endpoints", "also_on", "context_window", "tools",
               "vision", "cost")


def age(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return "never fetched"
    hours = seconds / 3600
    return f"{hours:.1f} h" if hours < 48 else f"{hours / 24:.0f} days"


def feeds_table(data: dict[str, Any]) -> None:
    rows = [{**f, "age": age(f.get("age_s")), "tried": str(f.get("tried") or "")[:16]}
            for f in data.get("feeds") or []]
    show(rows_table("catalog feeds", FEED_COLUMNS, rows))


@app.command("status")
def catalog_status(ctx: typer.Context) -> None:
    """Each feed's source (the feed, or the snapshot shipped with the package), age and last error
    (GET /api/catalog).

    Example:

    \b
      bench catalog status
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/api/catalog")

    def human(data: dict[str, Any]) -> None:
        feeds_table(data)
        say(f"facts last changed by a refresh: {data.get('refreshed') or 'never'}")

    s.emit(reply, human)


@app.command("refresh")
def refresh(
    ctx: typer.Context,
    force: Annotated[bool, typer.Option("--force/--if-due",
                                        help="Refetch every feed (default), or only those older than 20 h.")]
    = True,
) -> None:
    """Refresh the catalog now: fetch the feeds, fill in every registered model's facts, raise or clear
    `went paid` alerts. A feed that is down, slow, too large or malformed keeps its previous entries
    (POST /api/catalog/refresh).

    Example:

    \b
      bench catalog refresh
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/catalog/refresh", {"force": force})

    def human(data: dict[str, Any]) -> None:
        feeds_table(data)
        say(f"facts changed: {', '.join(data.get('changed') or []) or 'none'}")
        for key in data.get("raised") or []:
            say(f"went paid: {key}")
        for key in data.get("cleared") or []:
            say(f"free again: {key}")

    s.emit(reply, human)


def cost(row: dict[str, Any]) -> str:
    price = row.get("cost")
    if not isinstance(price, dict):
        return ""
    return f"${price.get('input'):g}/${price.get('output'):g}"


def discover(
    ctx: typer.Context,
    free: Annotated[bool, typer.Option("--free", help="Only free models.")] = False,
    new: Annotated[bool, typer.Option("--new", help="Only models first seen in the last 7 days.")] = False,
) -> None:
    """Models worth adding, free and new first, each with its reach: on bench, connected (an endpoint of
    its provider exists), easy to add (an OpenAI-compatible API is known) or other (GET /api/discover).
    Cost is dollars per million tokens, in/out.

    Example:

    \b
      bench discover --free --new
    """
    s = session(ctx)
    query = "&".join(name for name, on in (("free=true", free), ("new=true", new)) if on)
    with s.client() as client:
        reply = client.get("/api/discover" + (f"?{query}" if query else ""))

    def human(data: dict[str, Any]) -> None:
        rows = [{**r, "cost": cost(r), "endpoints": ", ".join(r.get("endpoints") or []),
                 "also_on": ", ".join(r.get("also_on") or [])} for r in data.get("rows") or []]
        if rows:
            show(rows_table("discover", ROW_COLUMNS, rows))
        else:
            say("nothing to discover: run `bench catalog refresh`, or widen the filters")

    s.emit(reply, human)
