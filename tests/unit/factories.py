"""Builders for the gateway's unit tests: a configuration fold, a plan, seat completions."""

from __future__ import annotations

from typing import Any, Literal

from shared.commands import Plan
from shared.config_state import ConfigState
from shared.events import (
    CollectionSaved,
    ConfigEvent,
    EndpointSaved,
    ModelRegistered,
    SeatCompleted,
    SeatPlan,
    Skip,
)


def config(*events: ConfigEvent) -> ConfigState:
    state = ConfigState()
    for seq, event in enumerate(events, 1):
        state.apply(event, seq)
    return state


def endpoint(name: str = "fake", base: str = "https://api.example.com/v1", **extra: Any) -> EndpointSaved:
    return EndpointSaved(id=f"cfg:ep:{name}", name=name, base=base, **extra)


def model(alias: str, served: str | None = None, endpoint: str = "fake", **extra: Any) -> ModelRegistered:
    return ModelRegistered(
        id=f"cfg:m:{alias}", alias=alias, served=served or alias, endpoint=endpoint, **extra
    )


def collection(name: str, members: list[str], **extra: Any) -> CollectionSaved:
    return CollectionSaved(id=f"cfg:c:{name}", name=name, members=members, **extra)


PANEL = "p20260102-030405-ab12"


def seats(members: int = 2, explorers: int = 1, panel: str = PANEL) -> list[SeatPlan]:
    out = [
        SeatPlan(
            call=f"{panel}.member{i}",
            seat="member",
            alias=f"m{i}",
            served=f"org/m{i}",
            endpoint="fake",
            connection="fake",
        )
        for i in range(1, members + 1)
    ]
    explorer_seats = [("explorer", "explorer"), ("explorer2", "explorer 2")]
    for (suffix, label), i in zip(explorer_seats, range(1, explorers + 1), strict=False):
        out.append(
            SeatPlan(
                call=f"{panel}.{suffix}",
                seat=label,
                alias=f"x{i}",
                served=f"org/x{i}",
                endpoint="fake",
                connection="fake",
            )
        )
    return out


def plan(members: int = 2, explorers: int = 1, skipped: list[Skip] | None = None, **extra: Any) -> Plan:
    return Plan(
        panel=PANEL,
        collection="core",
        shape="general",
        shape_by="set on the collection",
        members=members,
        explorers=explorers,
        seats=seats(members, explorers),
        skipped=skipped or [],
        **extra,
    )


def done(
    seat: SeatPlan,
    status: Literal["ok", "empty", "error"] = "ok",
    answer: str = "",
    error: str = "",
    seconds: float = 1.23,
) -> SeatCompleted:
    if status == "ok" and not answer:
        answer = f"{seat.alias} answers"
    return SeatCompleted(
        id=f"seat:{seat.call}",
        call=seat.call,
        panel=PANEL,
        seat=seat.seat,
        alias=seat.alias,
        served=seat.served,
        endpoint=seat.endpoint,
        connection=seat.connection,
        status=status,
        seconds=seconds,
        answer=answer,
        error=error,
    )
