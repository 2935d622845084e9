"""`bench endpoints` and `bench endpoint …`: where models are served from (SPEC C-2, O-5). Keys are never
arguments, and never sent to the server: the callers read them from `BENCHWARMERS_KEY_<NAME>`."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from cli.commands import noun_app
from cli.output import confirm, record_table, rows_table, say, show, stdout
from cli.session import session
from shared.provider_keys import key_variable

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


def listing_note(data: Any) -> None:
    listing = data.get("listing") or {}
    if listing.get("note"):
        say(f"bench: {listing['note']}")


def endpoints(ctx: typer.Context) -> None:
    """List the endpoints (GET /api/endpoints).

    Example:

    \b
      bench endpoints
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/api/endpoints")
    columns = ("name", "base", "api", "kind", "default", "models", "key_variable")
    s.emit(reply, lambda data: show(rows_table("endpoints", columns, data.get("endpoints") or [])))


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
    test: Annotated[bool, typer.Option("--test", help="Only list its models; save nothing.")] = False,
) -> None:
    """Add or change an endpoint once the callers have listed its models (POST /api/endpoint).

    The key is not an argument: set BENCHWARMERS_KEY_<NAME> where the callers run. If the model list
    fails, nothing is saved. A saved endpoint keeps its base (the callers send its key there only): to
    move it, remove it and add it again.

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
    if test:
        body["test"] = True
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/endpoint", body)

    def human(data: Any) -> None:
        if data.get("endpoint"):
            show(record_table(f"endpoint {name}", data["endpoint"]))
        listing_note(data)

    s.emit(reply, human)
    say(f"callers read this endpoint's key from {key_variable(name)}")


@app.command("test")
def test(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Endpoint name.")],
) -> None:
    """List an endpoint's models through a caller; saves nothing (POST /api/endpoint/test).

    Example:

    \b
      bench endpoint test openrouter
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/endpoint/test", {"name": name})

    def human(data: Any) -> None:
        for model in (data.get("listing") or {}).get("models") or []:
            stdout.print(model, markup=False)
        listing_note(data)

    s.emit(reply, human)


@app.command("key")
def key(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Endpoint name.")],
) -> None:
    """Say where the callers read an endpoint's key, and whether they have it (POST /api/endpoint/key).

    Keys never go to the server: set BENCHWARMERS_KEY_<NAME> in the callers' environment (or a file of
    that name in their BENCH_SECRETS_PATH), then run this to check.

    Example:

    \b
      bench endpoint key openrouter
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/endpoint/key", {"name": name})
    s.emit(reply, lambda data: stdout.print(str(data.get("message", "")), markup=False))


@app.command("rm")
def rm(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Endpoint name.")],
    with_models: Annotated[
        bool, typer.Option("--with-models", help="Also retire the models on it (restorable later).")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Remove an endpoint (POST /api/endpoint/remove).

    Example:

    \b
      bench endpoint rm old-provider --with-models --yes
    """
    confirm(f"Remove endpoint {name}{' and retire its models' if with_models else ''}?", yes)
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/endpoint/remove", {"name": name, "with_models": with_models})

    def human(data: Any) -> None:
        retired = data.get("retired") or []
        say(f"removed endpoint {name}" + (f"; retired {', '.join(retired)}" if retired else ""))

    s.emit(reply, human)


@app.command("default")
def make_default(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Endpoint name.")],
) -> None:
    """Make an endpoint the default (POST /api/endpoint/default).

    Example:

    \b
      bench endpoint default openrouter
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/endpoint/default", {"name": name})
    s.emit(reply, lambda data: say(f"{name} is the default endpoint"))
