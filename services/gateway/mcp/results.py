"""What the MCP tools read from their arguments and say back (MCP-3), without I/O: argument checks, the
`ask` result's two text items, the progress line as seats land, the verdict line, the collection list, and
a refusal as the text of an `isError` result."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from services.gateway.ask import Ask, ReplyMode, make_ask
from services.gateway.panel.resolve import collection_list
from shared.events import SeatCompleted, SeatPlan
from shared.refusal import Refusal

ERROR_TAIL = 300
MCP_FORMAT = "mcp"
COLLECTION_FIELDS = ("description", "tags", "members", "explorers", "shape", "reply", "merger")
SEATS_HEADING = "Seats (send one verdict per seat, by its call id):"


@dataclass(frozen=True)
class Outcome:
    """A tool's result: its text items, and whether it is a failure (`isError`)."""

    texts: list[str]
    is_error: bool = False


@dataclass(frozen=True)
class AskArgs:
    collection: str
    prompt: str
    system: str = ""
    merged: bool | None = None
    with_: list[str] = field(default_factory=list)


def refused(tool: str, status: int, message: str) -> Outcome:
    """A server refusal in MCP-2's words (the tool stands where the anchor's HTTP route stood)."""
    return Outcome([f"Benchwarmers refused {tool} ({status}): {message}"], is_error=True)


def text_arg(args: Mapping[str, Any], name: str, required: bool = False) -> str:
    value = args.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise Refusal(400, f'"{name}" must be {"non-empty " if required else ""}text')
    return value


def strings_arg(args: Mapping[str, Any], name: str) -> list[str]:
    value = args.get(name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Refusal(400, f'"{name}" must be a list of strings')
    return value


def ask_args(args: Mapping[str, Any]) -> AskArgs:
    merged = args.get("merged")
    if merged is not None and not isinstance(merged, bool):
        raise Refusal(400, '"merged" must be true or false')
    return AskArgs(
        collection=text_arg(args, "collection", required=True).strip(),
        prompt=text_arg(args, "prompt", required=True),
        system=text_arg(args, "system"),
        merged=merged,
        with_=strings_arg(args, "with"),
    )


def ask_of(asked: AskArgs, caller: str) -> Ask:
    """The canonical request `ask` puts to the panel: `bench.reply` is set only when `merged` was given."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": asked.system}] if asked.system else []
    messages.append({"role": "user", "content": asked.prompt})
    reply: ReplyMode | None = None if asked.merged is None else ("merged" if asked.merged else "all")
    return replace(make_ask(MCP_FORMAT, asked.collection, messages, with_=asked.with_, reply=reply),
                   caller=caller)


def seat_entry(seat: Mapping[str, Any], with_answer: bool) -> dict[str, Any]:
    error = seat.get("error")
    entry = {key: seat.get(key) for key in ("call", "seat", "alias", "status", "seconds")}
    entry["error"] = error[-ERROR_TAIL:] if isinstance(error, str) else None
    if with_answer:
        entry["answer"] = seat.get("answer")
    return entry


def seats_summary(bench: Mapping[str, Any], merged: bool) -> dict[str, Any]:
    """MCP-3's seats JSON: every seat without its answer (the reply carries them) unless the reply was
    merged; the merger, skips and a merge's note when there are any."""
    summary: dict[str, Any] = {key: bench.get(key) for key in ("panel", "collection", "shape")}
    summary["seats"] = [seat_entry(seat, merged) for seat in bench.get("seats", [])]
    if bench.get("merger"):
        summary["merger"] = seat_entry(bench["merger"], True)
    for key in ("skipped", "note"):
        if bench.get(key):
            summary[key] = bench[key]
    return summary


def ask_outcome(content: str, bench: Mapping[str, Any], merged: bool) -> Outcome:
    seats = json.dumps(seats_summary(bench, merged), indent=1, ensure_ascii=False)
    return Outcome([content, f"{SEATS_HEADING}\n{seats}"])


def seat_name(seat: SeatPlan) -> str:
    """The seat as its call id ends: `member1`, `explorer2`, `merger`."""
    return seat.call.rpartition(".")[2] or seat.seat


def seated_message(seats: Sequence[SeatPlan], panel: str) -> str:
    names = ", ".join(f"{seat_name(seat)} ({seat.alias})" for seat in seats)
    return f"panel {panel} asked {len(seats)} seat(s): {names}; waiting for their answers"


def landed_message(landed: Sequence[tuple[SeatPlan, SeatCompleted]], total: int) -> str:
    """Which seats have answered so far, latest last: `2 of 3 seats answered: member1 (gpt-mini, ok 1.2s),
    …`."""
    said = ", ".join(f"{seat_name(seat)} ({seat.alias}, {done.status} {done.seconds:.1f}s)"
                     for seat, done in landed)
    return f"{len(landed)} of {total} seats answered: {said}"


def waiting_message(waiting: Sequence[SeatPlan], total: int, seconds: float) -> str:
    """Between landings (every keep-alive period): who the panel still waits for."""
    names = ", ".join(f"{seat_name(seat)} ({seat.alias})" for seat in waiting)
    return f"{total - len(waiting)} of {total} seats answered after {seconds:.0f}s; still waiting for {names}"


def tick_progress(landed: int, ticks: int) -> float:
    """A waiting notification's progress: above the seats landed, below the next landing, and higher at each
    tick (MCP progress must increase)."""
    return landed + 1 - 0.5**ticks


def verdict_text(call: str, useful: bool, real: Sequence[str] | None, false: Sequence[str] | None) -> str:
    word = "useful" if useful else "not useful"
    return f"Recorded {call}: {word}, {len(real or [])} real, {len(false or [])} false."


def collections_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """MCP-3 `list_collections`: each collection once (the rows without a `:` mode suffix), as JSON; or how
    to make the first one."""
    plain = [row for row in rows if ":" not in str(row.get("id", ""))]
    if not plain:
        return collection_list({})
    listed = []
    for row in plain:
        together = row.get("together") or {}
        item = {"name": row.get("id"), **{key: row.get(key) for key in COLLECTION_FIELDS}}
        item.update({key: together.get(key) for key in ("context_window", "capabilities", "limits")})
        listed.append(item)
    return json.dumps(listed, indent=1, ensure_ascii=False)
