"""The bus messages of a panel: one SeatCall per seat (P-10, P-6), the gateway's own seat error, the log."""

from __future__ import annotations

from typing import Any

from services.gateway.ask import Ask
from services.gateway.formats import OPENAI_CHAT
from services.gateway.panel.calls import (
    no_answer_error,
    panel_answered,
    seat_call,
    seat_failed,
    seat_messages,
)
from tests.unit.gateway.factories import PANEL, endpoint, plan

IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png?sig=1"}}


def chat(messages: list[dict[str, Any]]) -> Ask:
    return OPENAI_CHAT.parse({"model": "bench/core", "messages": messages}, {})


def test_text_only_seats_get_system_and_prompt() -> None:
    ask = chat(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
        ]
    )
    assert [m.model_dump(exclude_none=True) for m in seat_messages(ask)] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "user: a\n\nassistant: b\n\nuser: c"},
    ]
    no_system = chat([{"role": "user", "content": "a"}])
    assert [m.model_dump(exclude_none=True) for m in seat_messages(no_system)] == [
        {"role": "user", "content": "a"}
    ]


def test_seats_with_images_get_the_messages_as_sent() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": [{"type": "text", "text": "?"}, IMAGE]},
    ]
    ask = chat(messages)
    assert [m.model_dump(exclude_none=True) for m in seat_messages(ask)] == messages


def test_seat_call_carries_the_endpoint_and_no_secret() -> None:
    p = plan(members=1, explorers=1)
    ep = endpoint(headers={"HTTP-Referer": "https://bench.example"}, api="chat")
    ask = chat([{"role": "user", "content": "Explain   monads"}])
    call = seat_call(p, p.seats[1], ask, ep, deadline=1000.0, timeout_s=420.0)
    assert call.call == f"{PANEL}.explorer" and call.seat == "explorer" and call.panel == PANEL
    assert (call.alias, call.served, call.connection) == ("x1", "org/x1", "fake")
    assert (call.endpoint, call.base, call.api) == ("fake", "https://api.example.com/v1", "chat")
    assert call.headers == {"HTTP-Referer": "https://bench.example"}
    assert call.collection == "core"
    assert call.task == "Explain monads (bench/core, general)"
    assert call.purpose == "panel"
    assert (call.deadline, call.timeout_s) == (1000.0, 420.0)
    assert "key" not in call.model_dump_json().lower()


def test_seat_failed_is_an_error_with_the_callers_event_id() -> None:
    p = plan(members=1, explorers=0)
    ask = chat([{"role": "user", "content": "q"}])
    event = seat_failed(p, p.seats[0], ask, no_answer_error(420.0), 420.04, "gateway-1")
    assert event.id == f"seat:{PANEL}.member1"
    assert event.status == "error" and event.error == "no answer in 420s"
    assert event.seconds == 420.0
    assert event.subject() == f"bench.ev.seat.{PANEL}.member1"
    assert no_answer_error(0.5) == "no answer in 0.5s"


def test_panel_answered_keeps_placeholders_not_images() -> None:
    p = plan(members=2, explorers=0)
    ask = chat(
        [
            {"role": "system", "content": "S"},
            {"role": "user", "content": [{"type": "text", "text": "?"}, IMAGE]},
        ]
    )
    event = panel_answered(p, ask, "all", "gateway-1")
    assert event.id == f"answered:{PANEL}"
    assert event.calls == [f"{PANEL}.member1", f"{PANEL}.member2"]
    assert event.system == "S"
    assert event.prompt == "?\n\n[image: https://example.com/cat.png?...]"
    assert "sig=1" not in event.model_dump_json()
