"""The seater's consumer filters the stream to `FOLDED`: every event its fold reads must fall inside it."""

from __future__ import annotations

import pytest

from services.seater.service import FOLDED
from shared.events import ConfigEvent, ConfigEvents, EventBase
from tests.unit.ledger.factories import (
    call_used,
    completed,
    cooldown,
    recorded,
    route_offload,
    route_turn,
    seated,
    suite_answered,
)


def matches(pattern: str, subject: str) -> bool:
    """NATS subject matching: `*` takes one token, a final `>` one or more."""
    want, have = pattern.split("."), subject.split(".")
    for n, token in enumerate(want):
        if token == ">":
            return len(have) > n
        if n >= len(have) or token not in ("*", have[n]):
            return False
    return len(want) == len(have)


def folded(event: EventBase) -> bool:
    return any(matches(pattern, event.subject()) for pattern in FOLDED)


def test_the_matcher() -> None:
    assert matches("bench.ev.seat.>", "bench.ev.seat.p1.member1")
    assert not matches("bench.ev.seat.>", "bench.ev.seat")
    assert matches("bench.ev.config", "bench.ev.config")
    assert not matches("bench.ev.config", "bench.ev.config.x")
    assert matches("a.*.c", "a.b.c") and not matches("a.*.c", "a.b.d")


@pytest.mark.parametrize("event", [
    seated("p20261202-093000-abcd"),
    completed("p20261202-093000-abcd.merger", purpose="merger"),
    route_offload("r20261202-093000-abcd", 1, "a"),
    recorded("p20261202-093000-abcd.member1", "a", True),
    cooldown("a"),
    suite_answered("a", "race"),
], ids=lambda e: e.type)
def test_what_the_rotation_folds_is_delivered(event: EventBase) -> None:
    assert folded(event)


def test_every_config_event_is_delivered() -> None:
    # Config events share one subject, unless a type overrides it.
    assert all(cls.subject is ConfigEvent.subject for cls in ConfigEvents)
    assert folded(ConfigEvents[0].model_construct())


@pytest.mark.parametrize("event", [
    call_used("r20261202-093000-abcd.t1.1"),
    route_turn("r20261202-093000-abcd", 1),
], ids=lambda e: e.type)
def test_usage_and_route_turns_stay_on_the_server(event: EventBase) -> None:
    assert not folded(event)
