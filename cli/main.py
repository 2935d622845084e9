"""`bench` / `benchwarmers`: `bench up` runs the local stack; every other command is a thin HTTP client of
a running server (SPEC CLI-1..CLI-4).

Exit codes: 0 done, 1 refused or failed, 2 bad usage, 3 no server at the URL, 130 interrupted.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from cli.args import hoist_globals
from cli.commands import (
    alerts,
    ask,
    bus,
    catalog,
    changes,
    collection,
    endpoint,
    facts,
    keys,
    ledger,
    limits,
    mcp,
    model,
    onboard,
    quota,
    report,
    settings,
    sql,
    status,
    suite,
    up,
    usage,
    verdict,
)
from cli.errors import CliError
from cli.output import fail_lines
from cli.session import Session
from cli.settings import ClientSettings, normalise_url
from shared.version import RELEASED


class BenchGroup(TyperGroup):
    """The root command: global options anywhere on the line, and one place that turns a `CliError`
    into `bench: <reason>` lines and its exit code."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_globals(list(args)))

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except CliError as exc:
            s = ctx.find_object(Session)
            if exc.raw is not None and s is not None and s.json:
                typer.echo(exc.raw.rstrip("\n"))
            fail_lines(exc.lines)
            raise typer.Exit(exc.exit_code) from None


app = typer.Typer(
    cls=BenchGroup,
    name="bench",
    help="Benchwarmers: a panel gateway for LLMs.\n\n"
    "Example: bench up (in one terminal), then: bench status",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # plain click help and errors; Rich draws the result tables
    # Tracebacks with local variables could show a token: keep Python's plain ones.
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        try:
            typer.echo(f"benchwarmers {version('benchwarmers')} ({RELEASED})")
        except PackageNotFoundError:
            typer.echo("benchwarmers (not installed: run make)")
        raise typer.Exit(0)


@app.callback()
def root(
    ctx: typer.Context,
    url: Annotated[
        str | None,
        typer.Option(
            help="Server URL (env BENCHWARMERS_URL; default http://127.0.0.1:8122).", show_default=False
        ),
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="Print the server's reply verbatim.")] = False,
    _version_flag: Annotated[
        bool,
        typer.Option("--version", "-v", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    settings = ClientSettings()
    s = ctx.ensure_object(Session)
    s.url = normalise_url(url) if url else settings.url
    if not s.url.startswith(("http://", "https://")):
        raise typer.BadParameter(f"{s.url!r} is not an http(s) URL", param_hint="--url / BENCHWARMERS_URL")
    s.json = json
    s.admin_token = settings.admin_token.get_secret_value() if settings.admin_token else None
    s.key = settings.key.get_secret_value() if settings.key else None
    s.timeout_s = settings.timeout_s


app.command("up")(up.up)
app.command("down")(up.down)
app.command("status")(status.status)
app.command("ask")(ask.ask)
app.command("verdict")(verdict.verdict)
app.command("pending")(verdict.pending)
app.command("models")(model.models)
app.command("collections")(collection.collections)
app.command("endpoints")(endpoint.endpoints)
app.command("keys")(keys.keys)
app.command("changes")(changes.changes)
app.command("quota")(quota.quota)
app.command("usage")(usage.usage)
app.command("sql")(sql.sql)
app.command("report")(report.report)
app.command("alerts")(alerts.alerts)
app.command("discover")(catalog.discover)
assert facts.app is model.app  # `bench model facts|set` live on the model group
app.command("onboard")(onboard.onboard)
app.command("candidates")(onboard.candidates)
app.command("dismiss")(onboard.dismiss)
app.add_typer(model.app, name="model")
app.add_typer(collection.app, name="collection")
app.add_typer(endpoint.app, name="endpoint")
app.add_typer(keys.app, name="key")
app.add_typer(settings.app, name="settings")
app.add_typer(limits.app, name="limits")
app.add_typer(ledger.app, name="ledger")
app.add_typer(alerts.app, name="alert")
app.add_typer(bus.app, name="bus")
app.add_typer(mcp.app, name="mcp")
app.add_typer(suite.app, name="suite")
app.add_typer(catalog.app, name="catalog")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
