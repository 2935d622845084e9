"""`bench report`: how the offload seats went per model and per collection over a period (GET /api/report),
as tables, the server's JSON (`--json`) or CSV (`--csv`, one line per model and per collection)."""

from __future__ import annotations

import csv
import sys
from typing import Annotated, Any
from urllib.parse import urlencode

import typer

from cli.commands.usage import iso_time
from cli.output import rows_table, show
from cli.session import session

COLUMNS = ("name", "seats", "answered", "judged", "useful", "useful_rate", "judged_share", "p50_s", "p95_s",
           "tokens_in", "tokens_out", "cost", "failures")


def failures_text(failures: dict[str, int] | None) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted((failures or {}).items(), key=lambda kv: -kv[1]))


def flat(line: dict[str, Any]) -> dict[str, Any]:
    return {**line, "failures": failures_text(line.get("failures"))}


def write_csv(data: dict[str, Any]) -> None:
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(("level", *COLUMNS))
    for level in ("models", "collections"):
        for line in data.get(level) or []:
            row = flat(line)
            out.writerow((level[:-1], *("" if row.get(c) is None else row[c] for c in COLUMNS)))


def human(data: dict[str, Any]) -> None:
    period = f"{data.get('since')} – {data.get('until')}"
    for level in ("models", "collections"):
        show(rows_table(f"{level} ({period})", COLUMNS, [flat(line) for line in data.get(level) or []]))


def report(
    ctx: typer.Context,
    since: Annotated[str | None, typer.Option(help="From this ISO time (UTC when no zone); default: 30 "
                                                   "days before --until.")] = None,
    until: Annotated[str | None, typer.Option(
        help="Up to this ISO time (UTC when no zone); default: now.")] = None,
    price: Annotated[list[str] | None, typer.Option(
        help="A model's price, alias:input:output in dollars per million tokens (repeat it); a line "
             "with tokens on a model without one shows no cost.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the server's reply verbatim.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="One CSV line per model and per collection.")] = False,
) -> None:
    """Seats, useful rate, judged share, latency p50/p95, tokens, cost and failures by class, per model and
    per collection, for the panel, merger and route seats of a period (GET /api/report).

    Example:

    \b
      bench report --since 2026-11-01 --until 2026-12-01
      bench report --price openai/gpt-4o:2.5:10 --csv > november.csv
    """
    query = [("since", iso_time(since)), ("until", iso_time(until)), *(("price", p) for p in price or [])]
    s = session(ctx)
    s.json = s.json or as_json
    with s.client() as client:
        reply = client.get("/api/report?" + urlencode([(k, v) for k, v in query if v is not None]))
    s.emit(reply, write_csv if as_csv else human)
