"""`bench mcp`: the MCP server on stdio for agents (MCP-1), the Stop hook that reminds an agent of the
verdicts it owes, and `bench mcp install`, which sets both up for Claude Code in a project.

The MCP SDK is imported only when one of these runs: every other `bench` command starts without it."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.mcp_setup import hook_arguments, hook_reply, with_hook, with_server
from cli.output import say
from cli.session import session

if TYPE_CHECKING:
    from cli.mcp_bridge import Gateway

app = typer.Typer(invoke_without_command=True, rich_markup_mode=None, pretty_exceptions_enable=False)


def gateway(ctx: typer.Context) -> Gateway:
    from cli.mcp_bridge import Gateway

    s = session(ctx)
    return Gateway(s.url, s.key, s.timeout_s)


@app.callback()
def mcp(ctx: typer.Context) -> None:
    """MCP for agents on stdio: list_collections, ask, verdict, pending_verdicts, each a call to the gateway
    at BENCHWARMERS_URL with BENCHWARMERS_KEY. `bench mcp install` sets Claude Code up in a project.

    Example:

    \b
      claude mcp add benchwarmers -- bench mcp     # Claude Code starts it
    """
    if ctx.invoked_subcommand is None:
        from cli.mcp_bridge import serve_stdio

        asyncio.run(serve_stdio(gateway(ctx)))


@app.command("stop-hook")
def stop_hook(ctx: typer.Context) -> None:
    """Claude Code's Stop hook: reads the hook's JSON on stdin and, when seats of this session still wait for
    a verdict, asks Claude to send them (once per seat). Never fails the agent: problems go to stderr.

    Example:

    \b
      echo '{"session_id": "s1", "transcript_path": "/tmp/s1.jsonl"}' | bench mcp stop-hook
    """
    from cli.mcp_bridge import forward

    arguments = hook_arguments(sys.stdin.read())
    result = asyncio.run(forward(gateway(ctx), "pending_verdicts", arguments))
    text = "".join(getattr(item, "text", "") for item in result.content)
    if result.is_error:
        typer.echo(text, err=True)
        return
    reply = hook_reply(text)
    if reply:
        typer.echo(reply)


def merged_file(path: Path, change: Any, bench: str) -> None:
    current = json.loads(path.read_text()) if path.exists() else {}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(change(current, bench), indent=2) + "\n")


@app.command("install")
def install(
    folder: Annotated[Path, typer.Option("--dir", help="The project folder.")] = Path("."),
) -> None:
    """Set up Claude Code in a project: the MCP server in `.mcp.json` and the Stop hook in
    `.claude/settings.json` (merged into what is there). No secret is written: Claude Code passes its
    environment (BENCHWARMERS_URL, BENCHWARMERS_KEY) on to `bench mcp`.

    Example:

    \b
      bench mcp install --dir ~/code/my-project
    """
    bench = shutil.which("bench") or str(Path(sys.argv[0]).resolve())
    merged_file(folder / ".mcp.json", with_server, bench)
    merged_file(folder / ".claude" / "settings.json", with_hook, bench)
    say(f"Claude Code in {folder.resolve()} now has the benchwarmers MCP server and its Stop hook")
