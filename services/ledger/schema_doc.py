"""docs/ledger.md's table reference, made from the declared tables, so the page cannot drift from the schema:
`python -m services.ledger.schema_doc` rewrites it, and a unit test fails while the page differs."""

from __future__ import annotations

from pathlib import Path

from services.ledger import export, schema

PAGE = Path(__file__).resolve().parents[2] / "docs" / "ledger.md"
BEGIN = "<!-- tables: made by `python -m services.ledger.schema_doc` from services/ledger/schema.py -->"
END = "<!-- end of the generated tables -->"

# The events whose fold writes each table (services/ledger/fold.py's handlers).
FILLED_BY = {
    "events_applied": "every event on the stream, once (the fold's own audit trail)",
    "panels": "`panel_seated` (the plan) and `panel_answered` (the call log line)",
    "seats": "`seat_completed` (panel, merger, route, probe, shadow and suite seats)",
    "verdicts": "`verdict_recorded`",
    "config_changes": "every configuration event (endpoints, models, collections, keys, limits, alerts, …)",
    "cooldowns": "`cooldown_started`",
    "usage": "`seat_completed` (not a route conversation's offload) and `call_used`, selected in SQL from "
             "the batch's staged seats and calls (`services/ledger/usage_lines.py`)",
    "route_turns": "`route_turn`",
    "limits_learned": "`limit_learned`",
    "quota_records": "`quota_observed` (one row per record it carries)",
    "alerts": "`alert_raised` and `alert_cleared`",
    "probes": "`seat_completed` with purpose `probe`",
    "job_runs": "`job_ran`",
    "suite_answers": "`suite_answered`",
}
MERGE_WORDS = {
    "append": "append (no key index: the stream position, written in the same transaction, applies each "
              "sequence once)",
    "first": "first (the first row of a key wins; later ones are ignored)",
    "fill": "fill (each column keeps its first non-null value; `seq` becomes the latest)",
    "latest": "latest (the row of the highest `seq` replaces the others)",
}


def description(table: schema.Table) -> str:
    """The row type's docstring, when it has one of its own (not namedtuple's made-up one)."""
    doc = (table.row.__doc__ or "").strip()
    return "" if not doc or doc.startswith(f"{table.row.__name__}(") else " ".join(doc.split())


def tables_markdown() -> str:
    parts = []
    for table in schema.TABLES:
        lines = [f"### `{table.name}`", ""]
        if described := description(table):
            lines += [described, ""]
        lines += [
            f"- key: {', '.join(f'`{k}`' for k in table.key)}; merge: {MERGE_WORDS[table.merge]}",
            f"- filled by: {FILLED_BY[table.name]}",
            f"- exported by day of: `{export.day_of(table)}`",
            "",
            "| column | type |",
            "|---|---|",
            *(f"| `{name}` | `{kind}` |" for name, kind in table.columns.items()),
        ]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def written(page: str) -> str:
    """`page` with its generated section replaced by the current one."""
    head, found, rest = page.partition(BEGIN)
    _, ended, tail = rest.partition(END)
    if not found or not ended:
        raise ValueError(f"{PAGE.name} lacks the markers of its generated section")
    return f"{head}{BEGIN}\n\n{tables_markdown()}\n\n{END}{tail}"


if __name__ == "__main__":
    PAGE.write_text(written(PAGE.read_text()))
