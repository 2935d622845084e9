"""`bench model …`: models registered on the bench, each under an alias (SPEC C-5)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.commands import noun_app
from cli.output import record_table, show
from cli.session import session

app = noun_app("Models on the bench.")


@app.command("add")
def add(
    ctx: typer.Context,
    served: Annotated[str, typer.Argument(help="The id the endpoint serves the model as.")],
    endpoint: Annotated[str, typer.Option(help="The endpoint that serves it.")],
    alias: Annotated[str | None, typer.Option(help="Alias on the bench (server derives one).")] = None,
    context_window: Annotated[int | None, typer.Option(min=1, help="Context window in tokens.")] = None,
    max_output: Annotated[int | None, typer.Option(min=1, help="Most output tokens per call.")] = None,
    role: Annotated[str | None, typer.Option(help="Role, e.g. general, coder, image.")] = None,
    ad_hoc: Annotated[bool, typer.Option("--ad-hoc", help="Only called when asked for by name.")] = False,
    vision: Annotated[bool | None, typer.Option("--vision/--no-vision", help="Reads images.")] = None,
    tools: Annotated[bool | None, typer.Option("--tools/--no-tools", help="Calls tools.")] = None,
) -> None:
    """Register a model (POST /api/models).

    Example:

    \b
      bench model add openai/gpt-4o-mini --endpoint openrouter --alias gpt-mini --tools
    """
    body: dict[str, Any] = {"served": served, "endpoint": endpoint}
    optional = {
        "alias": alias, "context_window": context_window, "max_output": max_output, "role": role,
        "vision": vision, "tools": tools,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    if ad_hoc:
        body["ad_hoc"] = True
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/models", body)
    s.emit(reply, lambda data: show(record_table(f"model {served}", data.get("model") or body)))
