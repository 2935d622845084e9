"""Events as the seater, the callers and the gateway publish them, for the ledger's tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

from shared.events import (
    CooldownStarted,
    EndpointSaved,
    PanelAnswered,
    PanelSeated,
    SeatCompleted,
    SeatPlan,
    Skip,
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


def completed(
    call: str, alias: str = "a", status: Status = "ok", collection: str = "core", shape: str = "code",
    prompt: str = "find the race in refresh()", answer: str = "", error: str = "", seconds: float = 1.26,
    event_id: str | None = None, at: datetime = T0, seat: str = "member",
) -> SeatCompleted:
    return SeatCompleted(
        id=event_id or f"seat:{call}", at=at, by="caller", call=call, panel=call.split(".")[0], seat=seat,
        alias=alias, served=f"{alias}-served", endpoint="local", connection="local", collection=collection,
        task=task(prompt, collection, shape), status=status, seconds=seconds,
        answer=answer or (f"{alias} says hi" if status == "ok" else ""), error=error,
        http_status=200 if status != "error" else 500, attempts=1, tokens_in=12, tokens_out=34,
        reasoning_tokens=5, cached_tokens=2, tokens_estimated=False, caller="caller-1",
    )


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


def cooldown(alias: str = "a", n: int = 0) -> CooldownStarted:
    return CooldownStarted(id=f"cool:{alias}:{n}", at=T0, by="caller", alias=alias, connection="local",
                           until=T0 + timedelta(minutes=2), why="429")
