"""`bench endpoint …`: where models are served from (SPEC C-2). Keys are never arguments: the callers read
them from `BENCHWARMERS_KEY_<NAME>`."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from cli.commands import noun_app
from cli.output import record_table, say, show
from cli.session import session
from services.caller.keys import env_name

app = noun_app("Endpoints: where models are served from.")


class Api(StrEnum):
    chat = "chat"
    responses = "responses"
    anthropic = "anthropic"
    gemini = "gemini"


class Kind(StrEnum):
    provider = "provider"
    aggregator = "aggregator"
    hub = "hub"
    local = "local"


def parse_headers(pairs: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise typer.BadParameter(f"{pair!r} is not NAME=VALUE", param_hint="--header")
        headers[name.strip()] = value.strip()
    return headers


@app.command("add")
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Endpoint name: lower-case letters, digits and dashes.")],
    base: Annotated[str, typer.Option(help="Base URL, e.g. https://openrouter.ai/api/v1.")],
    api: Annotated[Api | None, typer.Option(help="API kind (server default: chat).")] = None,
    kind: Annotated[Kind | None, typer.Option(help="Endpoint kind (server infers it from the URL).")] = None,
    header: Annotated[
        list[str] | None, typer.Option(help="Header sent on every call, NAME=VALUE; repeatable.")
    ] = None,
    default: Annotated[bool, typer.Option("--default", help="Make it the default endpoint.")] = False,
) -> None:
    """Add or replace an endpoint (POST /api/endpoint).

    The key is not an argument: set BENCHWARMERS_KEY_<NAME> where the callers run.

    Example:

    \b
      bench endpoint add openrouter --base https://openrouter.ai/api/v1 --header X-Title=bench
    """
    body: dict[str, Any] = {"name": name, "base": base}
    if api is not None:
        body["api"] = api.value
    if kind is not None:
        body["kind"] = kind.value
    if header:
        body["headers"] = parse_headers(header)
    if default:
        body["default"] = True
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/endpoint", body)
    s.emit(reply, lambda data: show(record_table(f"endpoint {name}", data.get("endpoint") or body)))
    say(f"callers read this endpoint's key from {env_name(name)}")
