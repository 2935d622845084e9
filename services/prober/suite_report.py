"""T-6: each pass appends a table to `runs/suite-<date>.md` in the data folder. Pure text; the job writes
it."""

from __future__ import annotations

from datetime import datetime

from shared.events import SuiteAnswered


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:120]


def report(alias: str, results: list[SuiteAnswered], at: datetime) -> str:
    run = results[0].run if results else ""
    lines = [f"\n## {at:%H:%M:%S} UTC · {alias} · {run}\n",
             "| task | kind | found | invented | wrong | why |", "|---|---|---|---|---|---|"]
    for r in results:
        found = f"{len(r.found)}/{len(r.found) + len(r.missed)}" if r.kind == "answered" else ""
        lines.append(f"| {cell(r.task)} | {r.kind} | {found} | {cell(', '.join(r.invented))} | {r.wrong} | "
                     f"{cell(r.reason)} |")
    return "\n".join(lines) + "\n"
