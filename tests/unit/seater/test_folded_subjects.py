"""The seater's consumer filters the stream to `FOLDED`: every event its fold reads must fall inside it; a
learned window reaches the model facts its rules read."""

from __future__ import annotations

from typing import Any, cast

import pytest
from nats.aio.client import Client as NATS

from services.seater.service import FOLDED, Seater
from shared.events import ConfigEvent, ConfigEvents, EventBase, LimitLearned, ModelRegistered
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


def test_a_learned_window_reaches_the_seaters_model_facts() -> None:
    """C-15/L-3: `limit_learned` (axis context) is folded on `bench.ev.limit.>` and lowers the window the
    seater's size check reads; a looser one is ignored."""
    class NoBus:
        def jetstream(self) -> Any:
            return None

    seater = Seater(cast(NATS, NoBus()), "seater-test")
    seater._fold(ModelRegistered(id="cfg:m", alias="m", served="org/m", endpoint="ep",
                                 context_window=32_000), 1)
    learned = LimitLearned(id="learned:m:context:8000", alias="m", connection="ep", axis="context",
                           limit=8_000)
    assert folded(learned)
    seater._fold(learned, 2)
    seater._fold(learned.model_copy(update={"id": "learned:m:context:16000", "limit": 16_000}), 3)
    assert seater.config.models["m"].context_window == 8_000
