"""How `bench` speaks: results on stdout (the server's raw reply with `--json`), everything else on stderr."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from cli.errors import CliError, UsageProblem

stdout = Console(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)


def say(message: str) -> None:
    """A line for the human, never mixed into the data on stdout."""
    stderr.print(message, markup=False)


def fail_lines(lines: Iterable[str]) -> None:
    for line in lines:
        stderr.print(f"bench: {line}", markup=False)


def record_table(title: str, record: Mapping[str, Any]) -> Table:
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("field", style="bold")
    table.add_column("value")
    for name, value in record.items():
        if value not in (None, "", [], {}):
            table.add_row(name, Text(plain(value)))  # Text: the server's words are never markup
    return table


def plain(value: Any) -> str:
    """A value as a person reads it: lists with commas, mappings as `name: value` pairs, yes/no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(plain(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {plain(v)}" for k, v in value.items() if v not in (None, "", [], {}))
    return str(value)


def show(table: Table) -> None:
    stdout.print(table)


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


def confirm(question: str, yes: bool) -> None:
    """Destructive actions ask on a terminal; without one, only `--yes` lets them through (SPEC CLI-3)."""
    if yes:
        return
    if not stdin_is_terminal():
        raise UsageProblem(f"{question} needs a confirmation: run it again with --yes")
    if not typer.confirm(question, default=False):
        raise CliError("not done")


def rows_table(title: str, columns: Iterable[str], rows: Iterable[Mapping[str, Any]]) -> Table:
    """One row per record, the named columns only; the server's words are never markup."""
    names = list(columns)
    table = Table(title=title, title_justify="left")
    for name in names:
        table.add_column(name)
    for row in rows:
        table.add_row(*(Text(plain(row.get(name)) if row.get(name) is not None else "") for name in names))
    return table
