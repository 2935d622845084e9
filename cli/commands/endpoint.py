"""`bench endpoints` and `bench endpoint …`: where models are served from (SPEC C-2, O-5). Keys are never
arguments, and never sent to the server: the callers read them from `BENCHWARMERS_KEY_<NAME>` or the data
folder's secrets file, which `--key-stdin` and `bench endpoint connect` (a sign-in) write on this machine."""

from __future__ import annotations

import getpass
import sys
import webbrowser
from enum import StrEnum
from typing import Annotated, Any

import httpx
import typer

from cli import oauth, secrets_file
from cli.commands import noun_app
from cli.errors import Refused, UsageProblem
from cli.output import confirm, record_table, rows_table, say, show, stdin_is_terminal, stdout
from cli.session import Session, session
from cli.settings import UpSettings
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
    key_stdin: Annotated[bool, typer.Option(
        "--key-stdin", help="Read its key (hidden prompt on a terminal, else one line of stdin) into the "
        "data folder's secrets file, which bench up hands to the callers alone.")] = False,
) -> None:
    """Add or change an endpoint once the callers have listed its models (POST /api/endpoint).

    The key is never an argument: give it with --key-stdin (stored in the data folder's secrets file, mode
    0600, read by the callers alone), or set BENCHWARMERS_KEY_<NAME> where the callers run. If the model
    list fails, nothing is saved (a key just given is taken back out). A saved endpoint keeps its base (the
    callers send its key there only): to move it, remove it and add it again.

    Example:

    \b
      bench endpoint add openrouter --base https://openrouter.ai/api/v1 --key-stdin
    """
    saved = store_key(name, read_key(name)) if key_stdin else None
    try:
        save_endpoint(session(ctx), name, base, api, kind, header, default, test)
    except BaseException:
        if saved is not None:
            secrets_file.restore(saved)
            say(f"bench: {name}'s key was taken back out of {saved.path}")
        raise
    if saved is not None and test:
        secrets_file.restore(saved)
    elif saved is not None:
        say(f"{name}'s key is in {saved.path} (mode 0600); the callers read it on each call")


def read_key(name: str) -> str:
    """The key from a hidden prompt on a terminal, else the first line of stdin."""
    if stdin_is_terminal():
        return getpass.getpass(f"{name} key (hidden): ")
    return sys.stdin.readline()


def store_key(name: str, key: str) -> secrets_file.Saved:
    path = secrets_file.secrets_path(UpSettings().home)
    try:
        return secrets_file.store_key(path, name, key)
    except secrets_file.BadKey as exc:
        raise UsageProblem(str(exc)) from None
    except OSError as exc:
        raise Refused(f"the key could not be written to {path}: {exc.strerror}") from None


def save_endpoint(s: Session, name: str, base: str, api: Api | None, kind: Kind | None,
                  header: list[str] | None, default: bool, test: bool) -> None:
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
    with s.client() as client:
        reply = client.post("/api/endpoint", body)

    def human(data: Any) -> None:
        if data.get("endpoint"):
            show(record_table(f"endpoint {name}", data["endpoint"]))
        listing_note(data)

    s.emit(reply, human)
    say(f"callers read this endpoint's key from {key_variable(name)}")


PROVIDERS = {"openrouter": (oauth.OPENROUTER_AUTH, oauth.OPENROUTER_KEYS, oauth.OPENROUTER_BASE)}


@app.command("connect")
def connect(
    ctx: typer.Context,
    provider: Annotated[str, typer.Argument(help="The provider to sign in to: openrouter.")],
    name: Annotated[str, typer.Option(help="The endpoint's name (default: the provider's).")] = "",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Loopback port for the sign-in's return.")] = (
        3000
    ),
    browser: Annotated[bool, typer.Option("--browser/--no-browser", help="Open the sign-in page.")] = True,
    wait_s: Annotated[float, typer.Option("--wait-s", min=1, help="How long to wait for the sign-in.")] = 300,
    base: Annotated[str, typer.Option(hidden=True, help="The endpoint's base URL.")] = "",
    auth_url: Annotated[str, typer.Option(hidden=True, help="The provider's authorization page.")] = "",
    keys_url: Annotated[str, typer.Option(hidden=True, help="The provider's code-for-key exchange.")] = "",
) -> None:
    """Sign in to a provider that offers OAuth (OpenRouter's PKCE flow) and keep the key it gives: the key
    goes to the data folder's secrets file (mode 0600, for the callers alone), is never printed, and the
    endpoint is saved once the callers list its models with it.

    Example:

    \b
      bench endpoint connect openrouter
    """
    if provider not in PROVIDERS:
        raise UsageProblem(f"no sign-in for {provider!r}; providers: {', '.join(PROVIDERS)}")
    auth, keys, default_base = PROVIDERS[provider]

    def show_url(url: str) -> None:
        say(f"Sign in at: {url}")
        if browser:
            webbrowser.open(url)

    try:
        with httpx.Client() as http:
            key = oauth.sign_in(auth_url or auth, keys_url or keys, port, show_url, wait_s, http)
    except oauth.SignInFailed as exc:
        raise Refused(str(exc)) from None
    endpoint = name or provider
    saved = store_key(endpoint, key)
    del key
    try:
        save_endpoint(session(ctx), endpoint, base or default_base, None, None, None, False, False)
    except BaseException:
        secrets_file.restore(saved)
        say(f"bench: the key was taken back out of {saved.path}")
        raise
    say(f"signed in: {endpoint}'s key is in {saved.path} (mode 0600); the callers read it on each call")


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

    Keys never go to the server: give it with `bench endpoint add NAME --base URL --key-stdin` (the data
    folder's secrets file), or set BENCHWARMERS_KEY_<NAME> in the callers' environment (or a file of that
    name in their BENCH_SECRETS_PATH), then run this to check.

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
