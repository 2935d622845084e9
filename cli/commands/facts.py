"""`bench model facts ALIAS` and `bench model set ALIAS …`: a model's facts (SPEC C-15) with where each came
from, and the user's own values, which win per field until cleared."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

import typer

from cli.commands.model import app
from cli.errors import UsageProblem
from cli.output import rows_table, show
from cli.session import session

FACTS = ("context_window", "max_output", "tools", "vision", "structured_output", "reasoning", "cost",
         "knowledge_cutoff")


def facts_table(data: dict[str, Any]) -> None:
    rows = [{**line, "value": "unknown" if line.get("value") is None else line["value"]}
            for line in data.get("facts") or []]
    title = f"{data.get('alias')}: {data.get('served')} on {data.get('endpoint')}"
    show(rows_table(title, ("fact", "value", "source"), rows))


@app.command("facts")
def facts(ctx: typer.Context, alias: Annotated[str, typer.Argument(help="The model's alias.")]) -> None:
    """Show a model's facts: context window, output limit, tools, vision, structured output, reasoning, cost
    (dollars per million tokens) and knowledge cutoff, each with its source (a catalog feed, registration,
    learned, probe, or you) (GET /api/model/facts).

    Example:

    \b
      bench model facts gpt-mini --json
    """
    s = session(ctx)
    with s.client() as client:
        reply = client.get("/api/model/facts?alias=" + quote(alias, safe=""))
    s.emit(reply, facts_table)


@app.command("set")
def set_facts(
    ctx: typer.Context,
    alias: Annotated[str, typer.Argument(help="The model's alias.")],
    context_window: Annotated[int | None, typer.Option(min=1, help="Context window in tokens.")] = None,
    max_output: Annotated[int | None, typer.Option(min=1, help="Most output tokens per call.")] = None,
    tools: Annotated[bool | None, typer.Option("--tools/--no-tools", help="Calls tools.")] = None,
    vision: Annotated[bool | None, typer.Option("--vision/--no-vision", help="Reads images.")] = None,
    structured: Annotated[bool | None, typer.Option("--structured-output/--no-structured-output",
                                                    help="Keeps to a JSON schema.")] = None,
    reasoning: Annotated[bool | None, typer.Option("--reasoning/--no-reasoning",
                                                   help="Thinks first.")] = None,
    cost_in: Annotated[float | None, typer.Option(min=0, help="Input price, $ per million tokens.")] = None,
    cost_out: Annotated[float | None, typer.Option(min=0, help="Output price, $ per million tokens.")] = None,
    cutoff: Annotated[str | None, typer.Option("--knowledge-cutoff", help="YYYY-MM or YYYY-MM-DD.")] = None,
    clear: Annotated[list[str] | None, typer.Option(
        help="Drop your value for this fact (repeatable): the catalog's, learned or registered value shows "
             "again.")] = None,
) -> None:
    """Set a model's facts yourself, without registering it again; yours win over the catalog and learned
    values until cleared, and route mode and image panels follow them at once (POST /api/model/facts).

    Example:

    \b
      bench model set gpt-mini --context-window 128000 --tools --vision
      bench model set gpt-mini --clear tools
    """
    if (cost_in is None) != (cost_out is None):
        raise UsageProblem("give --cost-in and --cost-out together")
    unknown = [name for name in clear or [] if name not in FACTS]
    if unknown:
        raise UsageProblem(f"--clear takes one of {', '.join(FACTS)} (got {', '.join(unknown)})")
    body: dict[str, Any] = {"alias": alias}
    given = {"context_window": context_window, "max_output": max_output, "tools": tools, "vision": vision,
             "structured_output": structured, "reasoning": reasoning, "knowledge_cutoff": cutoff,
             "cost": {"input": cost_in, "output": cost_out} if cost_in is not None else None}
    body.update({k: v for k, v in given.items() if v is not None})
    if clear:
        body["clear"] = list(dict.fromkeys(clear))
    if len(body) == 1:
        raise UsageProblem("nothing to set: give a fact option or --clear FACT")
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/model/facts", body)
    s.emit(reply, facts_table)
