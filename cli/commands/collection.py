"""`bench collections` and `bench collection …`: named panels of models, asked for as `bench/<name>`."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any
from urllib.parse import urlencode

import typer

from cli.commands import noun_app
from cli.errors import Refused
from cli.output import confirm, record_table, rows_table, say, show
from cli.session import session

app = noun_app("Collections: the panels you ask.")


class ReplyMode(StrEnum):
    all = "all"
    merged = "merged"
    route = "route"


def split_list(texts: list[str] | str | None) -> list[str]:
    """`a,b` and repeated flags alike."""
    if texts is None:
        return []
    items = [texts] if isinstance(texts, str) else texts
    return [part.strip() for text in items for part in text.split(",") if part.strip()]


def collections(ctx: typer.Context) -> None:
    """List the collections you may ask (GET /v1/models, one row each).

    Example:

    \b
      bench collections
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/v1/models")

    def human(data: Any) -> None:
        rows = [{**row, "name": row.get("id")} for row in data.get("data") or []
                if ":" not in str(row.get("id"))]
        columns = ("name", "members", "reply", "explorers", "description", "tags")
        show(rows_table("collections", columns, rows))

    s.emit(reply, human)


@app.command("save")
def save(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Collection name; ask it as bench/<name>.")],
    members: Annotated[str | None, typer.Option(help="All the member aliases, comma-separated.")] = None,
    add: Annotated[list[str] | None, typer.Option("--add", help="Members to add; repeatable or a,b.")] = None,
    remove: Annotated[
        list[str] | None, typer.Option("--remove", help="Members to take out; repeatable or a,b.")
    ] = None,
    description: Annotated[str | None, typer.Option(help="What the panel is for.")] = None,
    shape: Annotated[str | None, typer.Option(help="Shape of the tasks it serves ('' = automatic).")] = None,
    tags: Annotated[str | None, typer.Option(help="Tags, comma-separated.")] = None,
    reply: Annotated[ReplyMode | None, typer.Option(help="all, merged or route.")] = None,
    merger: Annotated[str | None, typer.Option(help="Alias that merges ('' = chosen by verdicts).")] = None,
    shadows: Annotated[
        str | None, typer.Option(help="Route mode: aliases that answer each turn in the background, "
                                      "comma-separated ('' = none).")
    ] = None,
) -> None:
    """Create or change a collection (POST /api/collection); what you do not give keeps its value.

    Example:

    \b
      bench collection save core --members gpt-mini,llama-70b --reply all --tags daily
      bench collection save core --add qwen --remove llama-70b
      bench collection save agents --reply route --shadows qwen,gpt-mini
    """
    body: dict[str, Any] = {"name": name}
    if members is not None:
        body["members"] = split_list(members)
        if not body["members"]:
            raise typer.BadParameter("name at least one member", param_hint="--members")
    if add:
        body["add"] = split_list(add)
    if remove:
        body["remove"] = split_list(remove)
    optional = {"description": description, "shape": shape, "merger": merger}
    body.update({k: v for k, v in optional.items() if v is not None})
    if tags is not None:
        body["tags"] = split_list(tags)
    if shadows is not None:
        body["shadows"] = split_list(shadows)
    if reply is not None:
        body["reply"] = reply.value
    s = session(ctx)
    with s.client() as client:
        answer = client.post("/api/collection", body)
    s.emit(answer, lambda data: show(record_table(f"collection {name}", data.get("collection") or body)))
    say(f"ask it as model bench/{name.removeprefix('bench/')} at {s.url}/v1")


@app.command("show")
def show_one(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Collection name.")],
) -> None:
    """Show one collection (GET /api/collections).

    Example:

    \b
      bench collection show core
    """
    s = session(ctx)
    wanted = name.removeprefix("bench/")
    with s.client() as client:
        reply = client.get("/api/collections")
    found = next((c for c in reply.data.get("collections") or [] if c.get("name") == wanted), None)
    if found is None:
        raise Refused(f"no collection named {wanted!r}")
    if s.json:
        typer.echo(json.dumps(found))
    else:
        show(record_table(f"collection {wanted}", found))


@app.command("rm")
def rm(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Collection name.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete a collection (POST /api/collection/remove); its models stay on the bench.

    Example:

    \b
      bench collection rm old-panel --yes
    """
    confirm(f"Delete collection {name}?", yes)
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/collection/remove", {"name": name})
    s.emit(reply, lambda data: say(f"removed collection {data.get('removed', name)}"))


@app.command("rank")
def rank(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The collection.")],
) -> None:
    """Show why each member is where it is (GET /api/collection/rank): route mode's order for a new
    conversation (useful verdicts, then suite findings, resting members last), the merger candidates, and
    the router's primary (best suite recall on the collection's shape).

    Example:

    \b
      bench collection rank agents
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get(f"/api/collection/rank?{urlencode({'name': name})}")

    def human(data: Any) -> None:
        show(rows_table(f"{name}: route order", ["place", "alias", "why"], data.get("route") or []))
        say(f"mergers: {', '.join(data.get('mergers') or []) or 'none'}; "
            f"router's primary: {data.get('primary') or 'none (no suite scores)'}")

    s.emit(reply, human)
