"""`bench keys` and `bench key …`: gateway keys for apps (SPEC SEC-4). A new key is printed once, to
stdout, and never again: the server keeps only its hash."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.commands import noun_app
from cli.commands.collection import split_list
from cli.output import confirm, rows_table, say, show, stdout
from cli.session import session

app = noun_app("Gateway keys: who may call the gateway.")


def keys(ctx: typer.Context) -> None:
    """List the gateway keys: name, last four characters, scope, cap, last use (GET /api/gateway-keys).

    Example:

    \b
      bench keys
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/api/gateway-keys")

    def human(data: Any) -> None:
        say(f"keys are {'required' if data.get('required') else 'not required'} on the gateway routes")
        columns = ("name", "hint", "collections", "rpm", "created", "last_used")
        show(rows_table("gateway keys", columns, data.get("keys") or []))

    s.emit(reply, human)


@app.command("create")
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The key's name: who uses it (a-z, 0-9, -).")],
    collections: Annotated[
        str | None, typer.Option(help="Only these collections, comma-separated (default: all).")
    ] = None,
    rpm: Annotated[int | None, typer.Option(min=1, max=10_000, help="At most N requests a minute.")] = None,
) -> None:
    """Make a gateway key; it is printed once (POST /api/gateway-key).

    Example:

    \b
      bench key create my-app --collections core,vision --rpm 30
    """
    body: dict[str, Any] = {"name": name}
    if collections is not None:
        body["collections"] = split_list(collections)
    if rpm is not None:
        body["rpm"] = rpm
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/gateway-key", body)

    def human(data: Any) -> None:
        stdout.print(str(data.get("key", "")), markup=False)
        say("bench: this key is shown once: store it now (the server keeps only its hash)")

    s.emit(reply, human)


@app.command("revoke")
def revoke(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The key's name.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Revoke a gateway key at once, on every gateway (POST /api/gateway-key/remove).

    Example:

    \b
      bench key revoke my-app --yes
    """
    confirm(f"Revoke gateway key {name}? Apps using it stop working.", yes)
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/gateway-key/remove", {"name": name})
    s.emit(reply, lambda data: say(f"revoked {name}"))
