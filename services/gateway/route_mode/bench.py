"""What a route turn tells and records: the `bench` object and headers (RM-8), the turn's record and the
one offload per model that answered the conversation (RM-9). Never the prompt: an agent resends it whole
every turn, and the record keeps only its first user message's first 90 characters as the task.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal

from services.gateway.route_mode.assemble import TurnSummary
from services.gateway.route_mode.conversation import Conversation, first_user_text
from services.gateway.route_mode.failover import FailedOver
from shared.events import Skip

TASK_CHARS = 90
CONVERSATION_HEADER = "X-Bench-Conversation"
MODEL_HEADER = "X-Bench-Model"
Status = Literal["ok", "empty", "error"]


def task_text(messages: Sequence[dict[str, Any]]) -> str:
    """The first user message, whitespace collapsed, first 90 characters (C-13)."""
    return re.sub(r"\s+", " ", first_user_text(messages)).strip()[:TASK_CHARS]


def verdict_hint(call: str) -> str:
    return (f'optional, once per conversation: POST /bench/verdict {{"call": "{call}", "useful": true|false, '
            '"note": "..."}')


def route_bench(
    conversation: Conversation,
    alias: str,
    turn: int,
    failed_over: Sequence[FailedOver] = (),
    skipped: Sequence[Skip] = (),
) -> dict[str, Any]:
    """RM-8: the `bench` of a turn `alias` answered (`conversation` as it stands after the turn)."""
    call = conversation.call_for(alias)
    bench: dict[str, Any] = {
        "collection": conversation.collection, "reply": "route", "conversation": conversation.id,
        "call": call, "alias": alias, "turn": turn,
    }
    if failed_over:
        bench["failed_over"] = [f.as_json() for f in failed_over]
    if skipped:
        bench["skipped"] = [{"alias": s.alias, "why": s.why} for s in skipped]
    bench["verdict"] = verdict_hint(call)
    return bench


def route_headers(conversation_id: str, alias: str | None = None) -> dict[str, str]:
    """`X-Bench-Conversation` on every 200; `X-Bench-Model` when the member is known by the time of the 200
    (non-streamed turns, and streamed ones whose member went live before it)."""
    headers = {CONVERSATION_HEADER: conversation_id}
    if alias:
        headers[MODEL_HEADER] = alias
    return headers


@dataclass(frozen=True)
class RouteTurn:
    """RM-9: one line per turn (the anchor's `runs/gateway/routes.jsonl`)."""

    conversation: str
    call: str  # "" when every member failed
    at: datetime  # UTC
    model: str  # bench/<c>
    key: str  # the caller: gateway key name or `local`
    alias: str  # "" when every member failed
    turn: int
    task: str
    status: Status
    seconds: float
    first_token_s: float | None
    tool_calls: int
    finish: str | None
    tokens_in: int | None = None
    tokens_out: int | None = None
    reasoning: int | None = None
    tried: list[str] | None = None
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The line: optional fields only when they hold something."""
        line = asdict(self)
        line["at"] = self.at.isoformat()
        for name in ("tokens_in", "tokens_out", "reasoning", "tried", "error"):
            if not line[name]:
                del line[name]
        return line


def route_turn(
    conversation: Conversation,
    *,
    alias: str,
    at: datetime,
    task: str,
    status: Status,
    seconds: float,
    first_token_s: float | None,
    summary: TurnSummary | None,
    tried: Sequence[str],
    error: str = "",
) -> RouteTurn:
    """The record of the turn `conversation` just had (the record as it stands after the turn)."""
    usage = summary.usage if summary else None
    return RouteTurn(
        conversation=conversation.id, call=conversation.call_for(alias) if alias else "", at=at,
        model=conversation.collection, key=conversation.caller, alias=alias, turn=conversation.turns,
        task=task, status=status, seconds=round(seconds, 1),
        first_token_s=None if first_token_s is None else round(first_token_s, 1),
        tool_calls=len(summary.tool_calls) if summary else 0,
        finish=summary.finish_reason if summary else None,
        tokens_in=usage.tokens_in if usage else None, tokens_out=usage.tokens_out if usage else None,
        reasoning=usage.reasoning if usage else None, tried=list(tried) if len(tried) > 1 else None,
        error=error or None,
    )


def turn_status(summary: TurnSummary | None, error: str) -> Status:
    if error or summary is None:
        return "error"
    return "empty" if summary.empty else "ok"


@dataclass(frozen=True)
class RouteOffload:
    """RM-9: the one unjudged offload a model earns the first time it answers a conversation."""

    call: str
    alias: str
    task: str
    note: str


def first_answer_offload(
    before: Conversation | None, after: Conversation, alias: str, task: str, status: Status, seconds: float
) -> RouteOffload | None:
    """An offload when `alias` answered this conversation for the first time with this turn, else None."""
    if not alias or (before is not None and alias in before.answered) or alias not in after.answered:
        return None
    return RouteOffload(
        call=after.call_for(alias), alias=alias, task=f"{task} ({after.collection}:route)",
        note=f"route conversation; first turn {status} in {round(seconds, 1)}s",
    )
