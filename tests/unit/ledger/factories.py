"""Events as the seater, the callers and the gateway publish them, for the ledger's tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

from shared.events import (
    CallUsed,
    CooldownStarted,
    EndpointSaved,
    LimitLearned,
    LimitsSaved,
    PanelAnswered,
    PanelSeated,
    QuotaObserved,
    QuotaRecord,
    RouteTurn,
    SeatCompleted,
    SeatPlan,
    Skip,
    SuiteAnswered,
    VerdictRecorded,
)

T0 = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)


def task(prompt: str, collection: str = "core", shape: str = "code") -> str:
    """A seat's task as the gateway writes it (C-13)."""
    return f"{' '.join(prompt.split())[:90]} (bench/{collection}, {shape})"


def seated(panel: str, aliases: tuple[str, ...] = ("a", "b"), collection: str = "core",
           at: datetime = T0) -> PanelSeated:
    seats = [
        SeatPlan(call=f"{panel}.member{i}", seat="member", alias=a, served=f"{a}-served", endpoint="local",
                 connection="local")
        for i, a in enumerate(aliases, 1)
    ]
    return PanelSeated(
        id=f"seated:{panel}", at=at, by="seater", panel=panel, collection=collection, shape="code",
        shape_by="words", seats=seats, skipped=[Skip(seat="explorer", alias="z", why="resting")],
    )


Status = Literal["ok", "empty", "error"]
Paced = Literal["sent", "waited", "refused"]
Purpose = Literal["panel", "merger", "route", "probe", "shadow", "suite"]


def completed(
    call: str, alias: str = "a", status: Status = "ok", collection: str = "core", shape: str = "code",
    prompt: str = "find the race in refresh()", answer: str = "", error: str = "", seconds: float = 1.26,
    event_id: str | None = None, at: datetime = T0, seat: str = "member", connection: str = "local",
    purpose: Purpose = "panel", paced: Paced = "sent", waited_s: float = 0.0, attempts: int = 1,
    served_by: str = "", swap: bool = False,
) -> SeatCompleted:
    return SeatCompleted(
        id=event_id or f"seat:{call}", at=at, by="caller", call=call, panel=call.split(".")[0], seat=seat,
        alias=alias, served=f"{alias}-served", endpoint=connection, connection=connection,
        collection=collection, task=task(prompt, collection, shape), purpose=purpose, status=status,
        seconds=seconds,
        answer=answer or (f"{alias} says hi" if status == "ok" else ""), error=error,
        http_status=200 if status != "error" else 500, attempts=attempts, tokens_in=12, tokens_out=34,
        reasoning_tokens=5, cached_tokens=2, tokens_estimated=False, caller="caller-1",
        served_by=served_by or f"{alias}-served", swap=swap, paced=paced, waited_s=waited_s,
    )


def route_offload(conversation: str, n: int, alias: str, status: Status = "ok", seconds: float = 2.34,
                  collection: str = "agents", at: datetime = T0) -> SeatCompleted:
    """RM-9: the one offload a model earns the first time it answers a route conversation (gateway)."""
    call = f"{conversation}.{n}"
    return SeatCompleted(
        id=f"seat:{call}", at=at, by="gateway", call=call, panel=conversation, seat="route", alias=alias,
        served=f"{alias}-served", endpoint="local", connection="local", collection=collection,
        task=f"Fix the failing test (bench/{collection}:route)", purpose="route", status=status,
        seconds=seconds, attempts=1, tokens_in=100, tokens_out=20,
    )


def call_used(
    call: str, alias: str = "a", connection: str = "local", status: Status = "ok", paced: str = "sent",
    attempts: int = 1, tokens_in: int = 100, tokens_out: int = 20, seconds: float = 3.0,
    waited_s: float = 0.0, error: str = "", at: datetime = T0,
    purpose: Literal["route", "probe", "shadow", "listing"] = "route",
) -> CallUsed:
    """One route attempt (`<conv>.t<turn>.<attempt>`) as a caller reports its usage."""
    return CallUsed(
        id=f"used:{call}", at=at, by="caller", call=call, conversation=call.split(".")[0], alias=alias,
        served=f"{alias}-served", endpoint=connection, connection=connection, collection="agents",
        purpose=purpose, status=status, seconds=seconds, first_token_s=0.8 if status == "ok" else None,
        error=error, http_status=200 if status == "ok" else 429, attempts=attempts, tokens_in=tokens_in,
        tokens_out=tokens_out, reasoning_tokens=3, cached_tokens=0, paced=paced, waited_s=waited_s,
        served_by=f"{alias}-served", caller="caller-2",
    )


def route_turn(conversation: str, turn: int, alias: str = "a", n: int = 1, at: datetime = T0) -> RouteTurn:
    return RouteTurn(
        id=f"turn:{conversation}:{turn}", at=at, by="gateway", conversation=conversation,
        call=f"{conversation}.{n}" if alias else "", collection="bench/agents", alias=alias, turn=turn,
        task="Fix the failing test", status="ok" if alias else "error", seconds=4.2, first_token_s=0.8,
        tool_calls=2, finish="tool_calls", tokens_in=100, tokens_out=20, reasoning_tokens=None,
        tried=["b", alias] if alias else ["a", "b"], error="" if alias else "no member answered",
    )


def limit_learned(
    alias: str = "a", axis: Literal["rpm", "rpd", "tpm", "tpd", "context"] = "rpm", limit: int = 30,
    call: str = "", at: datetime = T0, connection: str = "local",
) -> LimitLearned:
    return LimitLearned(
        id=f"learned:{alias}:{axis}:{limit}", at=at, by="caller", alias=alias, connection=connection,
        axis=axis, limit=limit, call=call, why=f"stated in the provider's error for call {call}",
    )


def quota(metric: Literal["requests", "tokens", "input_tokens", "output_tokens"] = "requests",
          window: str = "day", limit: int | None = 1000, remaining: int = 10,
          reset_at: datetime | None = None, source: str = "x-ratelimit-remaining-requests") -> QuotaRecord:
    return QuotaRecord(metric=metric, window=window, limit=limit, remaining=remaining, reset_at=reset_at,
                       source=source)


def quota_observed(call: str, records: list[QuotaRecord], alias: str = "a", connection: str = "local",
                   at: datetime = T0) -> QuotaObserved:
    return QuotaObserved(id=f"quota:{call}", at=at, by="caller", alias=alias, connection=connection,
                         call=call, records=records)


def limits_saved(scope: Literal["connection", "model"], name: str, n: int = 0, at: datetime = T0,
                 **axes: int | None) -> LimitsSaved:
    return LimitsSaved.model_validate({"id": f"cfg:limits:{scope}:{name}:{n}", "at": at, "by": "admin",
                                       "scope": scope, "name": name, **axes})


def answered(panel: str, calls: list[str], collection: str = "core", at: datetime = T0) -> PanelAnswered:
    return PanelAnswered(
        id=f"answered:{panel}", at=at + timedelta(seconds=3), by="gateway", panel=panel,
        collection=collection, shape="code", shape_by="words", system="be brief",
        prompt="find the race in refresh()", calls=calls,
    )


def recorded(
    call: str, alias: str, useful: bool, note: str = "", n: int = 0, at: datetime = T0
) -> VerdictRecorded:
    return VerdictRecorded(
        id=f"verdict:{call}:test{n}:{n}", at=at, by="local", call=call, alias=alias, useful=useful, note=note,
        real=["the race"] if useful else [], false_claims=[] if useful else ["sql injection"],
    )


def endpoint(name: str = "local", n: int = 0) -> EndpointSaved:
    return EndpointSaved(id=f"cfg:{name}:{n}", at=T0, by="admin", name=name, base="http://127.0.0.1:9/v1",
                         headers={"X-Title": "bench", "Authorization": "Bearer sk-nope"})


def cooldown(alias: str = "a", n: int = 0, at: datetime = T0, rest: timedelta = timedelta(minutes=2),
             why: str = "429") -> CooldownStarted:
    return CooldownStarted(id=f"cool:{alias}:{n}", at=at, by="caller", alias=alias, connection="local",
                           until=at + rest, why=why)


SuiteKind = Literal["answered", "error", "refused", "timeout"]


def suite_answered(
    alias: str, task: str, found: int = 1, missed: int = 0, n: int = 1, at: datetime = T0,
    shape: str = "review", recall: bool = True, kind: SuiteKind = "answered", wrong: str = "",
) -> SuiteAnswered:
    """T-2: one scored suite answer; `found`/`missed` clause counts, run `s…-<n>`."""
    run = f"s20261202-093000-{n:04x}"
    return SuiteAnswered(
        id=f"suite:{run}.t1", at=at, run=run, call=f"{run}.t1", task=task, alias=alias, shape=shape,
        recall=recall, kind=kind, found=[f"f{i}" for i in range(found)],
        missed=[f"m{i}" for i in range(missed)],
        invented=["x"] if wrong else [], wrong=wrong,
    )
