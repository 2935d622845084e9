"""A route call seen as a seat call (adapters, pacing, limit learning), and what its end is told: the
relay's outcome to the gateway and the `CallUsed` line to the stream (RM-6, RM-9)."""

from __future__ import annotations

from services.caller.outcome import CallOutcome, CallReport, ToolCall, Usage
from services.caller.route_events import RouteReport, call_used, relay_outcome, route_seat, route_status
from shared.commands import RouteCall

CONV = "r20261202-120000-abcd"


def route_call(**over: object) -> RouteCall:
    fields: dict[str, object] = {
        "call": f"{CONV}.t2.1", "conversation": CONV, "turn": 2, "alias": "m-a", "served": "org/m-a",
        "endpoint": "fake", "base": "http://127.0.0.1:9/v1", "connection": "fake", "collection": "agents",
        "body": {"model": "org/m-a", "stream": True, "stream_options": {"include_usage": True},
                 "messages": [{"role": "user", "content": "hi"},
                              {"role": "assistant", "content": None,
                               "tool_calls": [{"id": "c1", "type": "function",
                                               "function": {"name": "ls", "arguments": "{}"}}]},
                              {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}],
                 "tools": [{"type": "function", "function": {"name": "ls"}}], "max_tokens": 50},
        "relay": "bench.relay.gw.abc", "first_piece_s": 30.0, "deadline": 2e9, "retries": 2,
    }
    fields.update(over)
    return RouteCall.model_validate(fields)


def test_a_route_call_is_a_seat_call_with_its_body_as_messages_and_options() -> None:
    seat = route_seat(route_call())
    assert (seat.call, seat.panel, seat.seat, seat.purpose, seat.retries) == (f"{CONV}.t2.1", CONV, "route",
                                                                              "route", 2)
    assert seat.options == {"tools": [{"type": "function", "function": {"name": "ls"}}], "max_tokens": 50}
    dumped = [m.model_dump(exclude_unset=True) for m in seat.messages]
    assert dumped == route_call().body["messages"]  # tool calls and results kept as sent


def test_an_answer_is_text_or_a_tool_call_and_reasoning_alone_is_empty() -> None:
    assert route_status(CallOutcome(tool_calls=[ToolCall(id="c", name="ls")])) == "ok"
    assert route_status(CallOutcome(text="hi")) == "ok"
    assert route_status(CallOutcome(reasoning="thinking")) == "empty"
    assert route_status(CallOutcome(text="hi", error="Error: cut")) == "error"


def test_the_end_told_to_the_gateway_and_to_the_stream() -> None:
    call = route_call()
    outcome = CallOutcome(text="done", finish="stop", model="org/other-model", http_status=200)
    report = CallReport(outcome, attempts=1, usage=Usage(10, 3, 1, 2), seconds=1.234, paced="waited",
                        waited_s=0.5)
    relayed = relay_outcome(route_seat(call), RouteReport(report, first_piece_s=0.4))
    assert (relayed.status, relayed.finish_reason, relayed.first_piece_s, relayed.paced) == (
        "ok", "stop", 0.4, "waited")
    usage = relayed.usage
    assert (usage.tokens_in, usage.reasoning_tokens, usage.estimated) == (10, 1, False)
    used = call_used(call, relayed, "caller-1", report.waited_s)
    assert (used.id, used.call, used.conversation, used.purpose, used.status) == (
        f"used:{CONV}.t2.1", f"{CONV}.t2.1", CONV, "route", "ok")
    assert (used.tokens_out, used.cached_tokens, used.first_token_s, used.swap, used.waited_s) == (
        3, 2, 0.4, True, 0.5)


def test_usage_is_estimated_when_the_member_reported_none() -> None:
    report = CallReport(CallOutcome(text="x" * 40), attempts=1, usage=None, seconds=0.1)
    relayed = relay_outcome(route_seat(route_call()), RouteReport(report))
    assert relayed.usage.estimated and relayed.usage.tokens_out == 10 and relayed.usage.tokens_in > 0
