"""The bus messages of a panel: one SeatCall per seat (P-10, P-6), the gateway's own seat error, the log."""

from __future__ import annotations

from typing import Any

from services.gateway.ask import Ask
from services.gateway.formats import OPENAI_CHAT
from services.gateway.panel.calls import (
    merger_question,
    no_answer_error,
    panel_answered,
    panel_question,
    seat_call,
    seat_failed,
    seat_messages,
)
from services.gateway.panel.merge import INSTRUCTION, Merge, merger_seat
from shared.commands import MergerCandidate, SeatCall
from tests.unit.factories import PANEL, done, endpoint, plan

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
    call = seat_call(p, p.seats[1], panel_question(ask, p), ep, deadline=1000.0, timeout_s=420.0)
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
    event = seat_failed(p, p.seats[0], panel_question(ask, p), no_answer_error(420.0), 420.04, "gateway-1")
    assert event.id == f"seat:{PANEL}.member1"
    assert event.status == "error" and event.error == "no answer in 420s"
    assert event.seconds == 420.0
    assert event.subject() == f"bench.ev.seat.{PANEL}.member1"
    assert event.purpose == "panel"
    assert no_answer_error(0.5) == "no answer in 0.5s"


def test_panel_answered_keeps_placeholders_not_images() -> None:
    p = plan(members=2, explorers=0)
    ask = chat(
        [
            {"role": "system", "content": "S"},
            {"role": "user", "content": [{"type": "text", "text": "?"}, IMAGE]},
        ]
    )
    event = panel_answered(p, ask, "gateway-1")
    assert event.id == f"answered:{PANEL}"
    assert event.calls == [f"{PANEL}.member1", f"{PANEL}.member2"]
    assert event.system == "S"
    assert event.prompt == "?\n\n[image: https://example.com/cat.png?...]"
    assert "sig=1" not in event.model_dump_json()
    assert (event.reply, event.note) == ("all", "")


MERGER = MergerCandidate(alias="boss", served="org/boss", endpoint="fake", connection="fake")


def test_the_merger_is_asked_text_only_as_a_merger() -> None:
    """P-15: instruction as system, the merge text as the user turn, never the request's images."""
    p = plan(members=1, explorers=0)
    ask = chat([{"role": "user", "content": [{"type": "text", "text": "?"}, IMAGE]}])
    question = merger_question(ask, p, "THE REQUEST ...")
    call = seat_call(p, merger_seat(p, MERGER), question, endpoint(), deadline=1.0, timeout_s=2.0)
    assert (call.call, call.seat, call.alias, call.purpose) == (f"{PANEL}.merger", "merger", "boss", "merger")
    assert [m.model_dump(exclude_none=True) for m in call.messages] == [
        {"role": "system", "content": INSTRUCTION},
        {"role": "user", "content": "THE REQUEST ..."},
    ]
    assert call.task == "? [image: https://example.com/cat.png?...] (bench/core, general)"
    failed = seat_failed(p, merger_seat(p, MERGER), question, "no answer in 2s", 2.0, "gateway-1")
    assert (failed.purpose, failed.call) == ("merger", f"{PANEL}.merger")


def test_the_log_line_of_a_merged_panel_ends_with_its_merger() -> None:
    p = plan(members=2, explorers=0)
    ask = chat([{"role": "user", "content": "q"}])
    seat = merger_seat(p, MERGER)
    ok = panel_answered(p, ask, "gateway-1", Merge(seat=seat, done=done(seat, answer="merged")))
    assert ok.calls == [f"{PANEL}.member1", f"{PANEL}.member2", f"{PANEL}.merger"]
    assert (ok.reply, ok.note) == ("merged", "")
    fell = panel_answered(p, ask, "gateway-1", Merge(note="no seat answered"))
    assert fell.calls == [f"{PANEL}.member1", f"{PANEL}.member2"]
    assert (fell.reply, fell.note) == ("all", "no seat answered")


def test_a_seat_call_carries_the_gateways_config_position_and_old_calls_carry_none() -> None:
    p = plan(members=1, explorers=0)
    ask = chat([{"role": "user", "content": "hi"}])
    question = panel_question(ask, p)
    assert seat_call(p, p.seats[0], question, endpoint(), 1.0, 2.0, None, 41).config_seq == 41
    old = seat_call(p, p.seats[0], question, endpoint(), 1.0, 2.0).model_dump()
    del old["config_seq"]
    assert SeatCall.model_validate(old).config_seq == 0  # a message from before the field still decodes
