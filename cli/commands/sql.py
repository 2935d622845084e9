"""`bench sql`: one read-only SELECT over the ledger's tables (panels, seats, usage, verdicts, …). The
query comes as the argument or, piped, on stdin, so a long one can live in a file."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from cli.errors import UsageProblem
from cli.output import plain, say, show, stdin_is_terminal
from cli.session import session


def query_text(query: str | None) -> str:
    """The argument, else stdin when something is piped in (`-` asks for stdin explicitly)."""
    if query is not None and query != "-":
        text = query
    elif stdin_is_terminal():
        raise UsageProblem('give the query, e.g. bench sql "SELECT count(*) FROM usage", or pipe it in')
    else:
        text = sys.stdin.read()
    if not text.strip():
        raise UsageProblem("the query is empty")
    return text


def result_table(data: dict[str, Any]) -> Table:
    """Rows by position: two columns may share a name (`SELECT 1, 1`)."""
    table = Table(title="result", title_justify="left")
    for name in data.get("columns") or []:
        table.add_column(str(name))
    for row in data.get("rows") or []:
        table.add_row(*(Text("" if v is None else plain(v)) for v in row))
    return table


def sql(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="One SELECT; omit it (or give -) to read stdin.")] = (
        None
    ),
    max_rows: Annotated[int, typer.Option(min=1, max=10_000, help="At most N rows.")] = 1000,
) -> None:
    """Run one read-only SELECT over the ledger's tables (POST /api/sql).

    Example:

    \b
      bench sql "SELECT alias, count(*) AS calls FROM usage GROUP BY alias ORDER BY calls DESC"
      bench sql --max-rows 50 < report.sql
    """
    body = {"sql": query_text(query), "max_rows": max_rows}
    s = session(ctx)
    with s.client() as client:
        reply = client.post("/api/sql", body)

    def human(data: dict[str, Any]) -> None:
        show(result_table(data))
        rows = len(data.get("rows") or [])
        say(f"{rows} row(s); more matched: raise --max-rows or narrow the query" if data.get("truncated")
            else f"{rows} row(s)")

    s.emit(reply, human)
