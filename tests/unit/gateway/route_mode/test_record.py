"""What a route turn puts on the bus: each member's call, the turn's record (never the prompt), the one
offload per model that answered, and the shadow seats (RM-5, RM-9)."""

from __future__ import annotations

import json

from services.gateway.route_mode.assemble import ToolCall, TurnSummary, Usage
from services.gateway.route_mode.bench import first_answer_offload, route_turn
from services.gateway.route_mode.failover import Failover
from services.gateway.route_mode.record import offload_event, route_call, shadow_calls, turn_event
from shared.commands import RouteSeat
from shared.events import EndpointSaved
from tests.unit.gateway.route_mode.member import CONV, NOW, conversation

ENDPOINT = EndpointSaved(id="cfg:e", name="fake", base="http://127.0.0.1:9/v1", headers={"X-Title": "bench"})
MEMBER = RouteSeat(alias="m-a", served="org/m-a", endpoint="fake", connection="fake", max_output=100)
SECRET_PROMPT = "my secret system prompt"
MESSAGES = [{"role": "system", "content": SECRET_PROMPT},
            {"role": "user", "content": "fix the   tests\nplease"}]
SUMMARY = TurnSummary(text="Reading.", reasoning="", tool_calls=(ToolCall("c1", "read", '{"p": 1}'),),
                      finish_reason="tool_calls", usage=Usage(30, 5))


def test_each_member_call_is_numbered_by_turn_and_place_and_only_the_last_retries() -> None:
    failover = Failover("bench/core", ["m-a", "m-b"])
    first, last = failover.attempts
    body = {"model": "org/m-a"}
    call = route_call(conversation(), 2, first, MEMBER, ENDPOINT, body, "bench.relay.g.1", 30.0, 2e9)
    assert (call.call, call.conversation, call.turn, call.collection, call.retries) == (
        f"{CONV}.t2.1", CONV, 2, "core", 0)
    assert (call.base, call.api, call.headers, call.first_piece_s, call.body) == (
        ENDPOINT.base, "chat", ENDPOINT.headers, 30.0, body)
    assert route_call(conversation(), 2, last, MEMBER, ENDPOINT, {}, "r", 30.0, 2e9).retries == 2


def test_the_turn_record_names_the_task_never_the_prompt() -> None:
    after = conversation()
    record = route_turn(after, alias="m-a", at=NOW, task="fix the tests please", status="ok", seconds=2.34,
                        first_token_s=0.52, summary=SUMMARY, tried=["m-b", "m-a"])
    event = turn_event(record, "gateway-1")
    assert (event.id, event.conversation, event.call, event.collection, event.turn) == (
        f"turn:{CONV}:1", CONV, f"{CONV}.1", "core", 1)
    assert (event.tool_calls, event.finish, event.tokens_in, event.tried, event.seconds) == (
        1, "tool_calls", 30, ["m-b", "m-a"], 2.3)
    assert SECRET_PROMPT not in event.model_dump_json()


def test_the_first_answer_offload_is_an_unjudged_route_seat_without_token_counts() -> None:
    after = conversation()
    offload = first_answer_offload(None, after, "m-a", "fix the tests please", "ok", 2.34)
    assert offload is not None
    seat = offload_event(offload, after, MEMBER, SUMMARY, "ok", 2.34, "gateway-1")
    assert (seat.id, seat.call, seat.panel, seat.seat, seat.purpose) == (
        f"seat:{CONV}.1", f"{CONV}.1", CONV, "route", "route")
    assert seat.task == "fix the tests please (bench/core:route)"
    assert seat.answer == 'Reading.\n[tool call] read({"p": 1})'
    assert (seat.tokens_in, seat.tokens_out) == (0, 0)  # the usage is in each call's CallUsed line


def test_shadow_seats_get_the_turn_as_sent_with_its_tools() -> None:
    shadow = RouteSeat(alias="m-s", served="org/m-s", endpoint="fake", connection="fake", max_output=64)
    fields = {"tools": [{"type": "function", "function": {"name": "read"}}], "max_tokens": 4000}
    chosen = [(shadow, ENDPOINT)]
    calls = shadow_calls(conversation(), 3, chosen, MESSAGES, fields, "task", 2e9, 420.0)
    assert [(c.call, c.panel, c.seat, c.purpose, c.alias) for c in calls] == [
        (f"{CONV}.shadow1.t3", CONV, "shadow", "shadow", "m-s")]
    assert calls[0].options == {"tools": fields["tools"], "max_tokens": 64}
    assert json.loads(calls[0].model_dump_json())["messages"] == MESSAGES


def test_member_and_shadow_calls_carry_the_gateways_config_position() -> None:
    attempt = Failover("bench/core", ["m-a"]).attempts[0]
    call = route_call(conversation(), 1, attempt, MEMBER, ENDPOINT, {}, "r", 30.0, 2e9, 17)
    assert call.config_seq == 17
    unplaced = route_call(conversation(), 1, attempt, MEMBER, ENDPOINT, {}, "r", 30.0, 2e9)
    assert unplaced.config_seq == 0
    shadow = RouteSeat(alias="m-s", served="org/m-s", endpoint="fake", connection="fake")
    calls = shadow_calls(conversation(), 1, [(shadow, ENDPOINT)], MESSAGES, {}, "t", 2e9, 420.0, 17)
    assert [c.config_seq for c in calls] == [17]
