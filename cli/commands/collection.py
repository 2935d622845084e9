"""`bench collection …`: named panels of models, asked for as `bench/<name>`."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from cli.commands import noun_app
from cli.output import record_table, say, show
from cli.session import session

app = noun_app("Collections: the panels you ask.")


class ReplyMode(StrEnum):
    all = "all"
    merged = "merged"
    route = "route"


def split_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


@app.command("save")
def save(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Collection name; ask it as bench/<name>.")],
    members: Annotated[str, typer.Option(help="Member aliases, comma-separated.")],
    description: Annotated[str | None, typer.Option(help="What the panel is for.")] = None,
    shape: Annotated[str | None, typer.Option(help="Shape of the tasks it serves.")] = None,
    tags: Annotated[str | None, typer.Option(help="Tags, comma-separated.")] = None,
    reply: Annotated[ReplyMode | None, typer.Option(help="all, merged or route.")] = None,
    merger: Annotated[str | None, typer.Option(help="Alias that merges the answers.")] = None,
) -> None:
    """Save a collection (POST /api/collection).

    Example:

    \b
      bench collection save core --members gpt-mini,llama-70b --reply all --tags daily
    """
    member_list = split_list(members)
    if not member_list:
        raise typer.BadParameter("name at least one member", param_hint="--members")
    body: dict[str, Any] = {"name": name, "members": member_list}
    optional = {"description": description, "shape": shape, "merger": merger}
    body.update({k: v for k, v in optional.items() if v is not None})
    if tags is not None:
        body["tags"] = split_list(tags)
    if reply is not None:
        body["reply"] = reply.value
    s = session(ctx)
    with s.client() as client:
        answer = client.post("/api/collection", body)
    s.emit(answer, lambda data: show(record_table(f"collection {name}", data.get("collection") or body)))
    say(f"ask it as model bench/{name} at {s.url}/v1")
