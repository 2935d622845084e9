"""`bench models` and `bench model …`: models registered on the bench, each under an alias (SPEC C-5, C-7,
C-8, C-14)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from cli.commands import noun_app
from cli.errors import UsageProblem
from cli.output import confirm, record_table, rows_table, show
from cli.session import session

app = noun_app("Models on the bench.")
COLUMNS = ("alias", "served", "role", "status", "last_probe", "endpoint", "connection", "ad_hoc", "why")


def probed(model: dict[str, Any]) -> dict[str, Any]:
    """The latest probe as one cell: when, and its failure class when it did not answer."""
    last = model.get("last_probe")
    if not isinstance(last, dict):
        return model
    how = "ok" if last.get("answered") else last.get("failure") or "failed"
    return {**model, "last_probe": f"{str(last.get('at', ''))[:16]} {how}"}


class OnOff(StrEnum):
    on = "on"
    off = "off"


def models(
    ctx: typer.Context,
    all_: Annotated[bool, typer.Option("--all", help="Retired models too.")] = False,
    find: Annotated[str | None, typer.Option(help="Only aliases or served ids containing this.")] = None,
    role: Annotated[str | None, typer.Option(help="Only this role.")] = None,
) -> None:
    """List the models on the bench with their status: healthy, failing, cooling, retiring, untested or
    retired, and their latest probe (GET /api/models).

    Example:

    \b
      bench models --find llama --role general
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/api/models")

    def human(data: Any) -> None:
        rows = [m for m in data.get("models") or [] if all_ or not m.get("retired")]
        if find:
            rows = [m for m in rows if find.lower() in f"{m.get('alias')} {m.get('served')}".lower()]
        if role:
            rows = [m for m in rows if m.get("role") == role]
        show(rows_table("models", COLUMNS, [probed(m) for m in rows]))

    s.emit(reply, human)


def change(ctx: typer.Context, path: str, body: dict[str, Any], title: str) -> None:
    s = session(ctx)
    with s.client() as client:
        reply = client.post(path, body)
    s.emit(reply, lambda data: show(record_table(title, data.get("model") or data.get("retired") or body)))


@app.command("add")
def add(
    ctx: typer.Context,
    served: Annotated[str, typer.Argument(help="The id the endpoint serves the model as.")],
    endpoint: Annotated[str, typer.Option(help="The endpoint that serves it.")],
    alias: Annotated[str | None, typer.Option(help="Alias on the bench (server derives one).")] = None,
    context_window: Annotated[int | None, typer.Option(min=1, help="Context window in tokens.")] = None,
    max_output: Annotated[int | None, typer.Option(min=1, help="Most output tokens per call.")] = None,
    role: Annotated[str | None, typer.Option(help="general, code, light, vision, image or decision.")] = None,
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
    change(ctx, "/api/models", body, f"model {served}")


@app.command("rename")
def rename(
    ctx: typer.Context,
    alias: Annotated[str, typer.Argument(help="The model's alias now.")],
    new: Annotated[str, typer.Argument(help="Its new alias (never one used before).")],
) -> None:
    """Rename a model; its collections and limits follow (POST /api/model).

    Example:

    \b
      bench model rename gpt-mini mini
    """
    change(ctx, "/api/model", {"alias": alias, "new_alias": new}, f"model {new}")


@app.command("role")
def role(
    ctx: typer.Context,
    alias: Annotated[str, typer.Argument(help="The model's alias.")],
    new_role: Annotated[str, typer.Argument(metavar="ROLE", help="general, code, light, vision or image.")],
) -> None:
    """Set a model's role: which shapes of task it is seated for (POST /api/model).

    Example:

    \b
      bench model role qwen-coder code
    """
    change(ctx, "/api/model", {"alias": alias, "new_role": new_role}, f"model {alias}")


@app.command("ad-hoc")
def ad_hoc(
    ctx: typer.Context,
    alias: Annotated[str, typer.Argument(help="The model's alias.")],
    state: Annotated[OnOff, typer.Argument(help="on: only called when named; off: also as an explorer.")],
) -> None:
    """Make a model ad hoc (never chosen automatically) or not (POST /api/model).

    Example:

    \b
      bench model ad-hoc big-expensive on
    """
    change(ctx, "/api/model", {"alias": alias, "new_ad_hoc": state == OnOff.on}, f"model {alias}")


@app.command("max-tokens")
def max_tokens(
    ctx: typer.Context,
    alias: Annotated[str, typer.Argument(help="The model's alias.")],
    tokens: Annotated[str, typer.Argument(metavar="N|none", help="Most tokens per answer, or none.")],
) -> None:
    """Set the max_tokens panel calls send this model, or none (POST /api/model-options).

    Example:

    \b
      bench model max-tokens gpt-mini 4000
    """
    if tokens.lower() == "none":
        value: int | None = None
    elif tokens.isdigit() and int(tokens) > 0:
        value = int(tokens)
    else:
        raise UsageProblem(f"max-tokens takes a positive number or none (got {tokens!r})")
    change(ctx, "/api/model-options", {"alias": alias, "max_tokens": value}, f"model {alias}")


@app.command("retire")
def retire(
    ctx: typer.Context,
    alias: Annotated[str, typer.Argument(help="The model's alias.")],
    reason: Annotated[str | None, typer.Option(help="Why, for the record.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Retire a model: out of every collection, its record kept; restore brings it back (POST /api/remove).

    Example:

    \b
      bench model retire old-model --reason "gone from the provider" --yes
    """
    confirm(f"Retire {alias} and take it out of every collection?", yes)
    body: dict[str, Any] = {"alias": alias}
    if reason:
        body["reason"] = reason
    change(ctx, "/api/remove", body, f"retired {alias}")


@app.command("retry")
def retry(
    ctx: typer.Context,
    alias: Annotated[str, typer.Argument(help="The model's alias.")],
) -> None:
    """Ask a model one probe call now; an answer clears its "retiring" alert (POST /api/retry).

    Example:

    \b
      bench model retry flaky-model
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/retry", {"alias": alias})
    s.emit(reply, lambda data: show(record_table(f"retry {alias}",
                                                 {k: v for k, v in data.items() if k != "ok"})))


@app.command("restore")
def restore(
    ctx: typer.Context,
    alias: Annotated[str, typer.Argument(help="The retired model's alias.")],
) -> None:
    """Bring a retired model back, into the collections it left that have room (POST /api/restore).

    Example:

    \b
      bench model restore old-model
    """
    change(ctx, "/api/restore", {"alias": alias}, f"model {alias}")
