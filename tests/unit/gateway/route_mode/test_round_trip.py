"""A-54 round trip: a member's parallel calls go out as Gemini `functionCall` parts or an Ollama
`tool_calls` line; the client's next turn (its calls and their results) comes back through the existing
request translations, and the member is sent calls and results whose ids pair up: kept where Gemini sent
them, numbered `call_0…` and matched by name where the client sent none."""

from __future__ import annotations

import json
from typing import Any

from services.gateway.formats.gemini import Gemini, GeminiRouteEncoder
from services.gateway.formats.ollama import OllamaChat, OllamaRouteEncoder
from services.gateway.formats.route_encoder import RouteContext
from services.gateway.route_mode.upstream_request import upstream_body
from tests.unit.gateway.formats.streams import ndjson, sse_events
from tests.unit.gateway.route_mode.member import LIST, READ, bench_for, drive, interleaved_calls

RESULTS = {"read_file": "def main(): ...", "list_dir": "test_main.py"}


def context(fmt: str) -> RouteContext:
    return RouteContext(format=fmt, collection="bench/core", model="bench/core:route", input_estimate=10)


def paired(messages: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(call id, function name, result) for each tool message, checking it answers a call of the assistant
    message before it (what an OpenAI-compatible member insists on)."""
    out = []
    calls: dict[str, str] = {}
    for message in messages:
        if message.get("tool_calls"):
            calls = {c["id"]: c["function"]["name"] for c in message["tool_calls"]}
        if message["role"] == "tool":
            assert message["tool_call_id"] in calls, message
            out.append((message["tool_call_id"], calls[message["tool_call_id"]], message["content"]))
    return out


def gemini_turn(keep_ids: bool) -> list[tuple[str, str, str]]:
    raw, _ = drive(GeminiRouteEncoder(context("gemini")), interleaved_calls(), bench_for())
    parts = sse_events(raw)[-1][1]["candidates"][0]["content"]["parts"]
    calls = [p["functionCall"] for p in parts]
    if not keep_ids:
        calls = [{k: v for k, v in c.items() if k != "id"} for c in calls]
    responses = [
        {
            "functionResponse": {
                **({"id": c["id"]} if keep_ids else {}),
                "name": c["name"],
                "response": {"output": RESULTS[c["name"]]},
            }
        }
        for c in reversed(calls)
    ]
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "Look at the code"}]},
            {"role": "model", "parts": [{"functionCall": c} for c in calls]},
            {"role": "user", "parts": responses},
        ]
    }
    ask = Gemini().parse(body, {"target": "bench/core:route:streamGenerateContent", "alt": "sse"})
    sent = upstream_body("org/m-a", ask.messages, ask.route_fields)
    return paired(sent["messages"])


def test_gemini_calls_keep_their_ids_through_the_round_trip() -> None:
    assert gemini_turn(keep_ids=True) == [
        (LIST[0], "list_dir", json.dumps({"output": RESULTS["list_dir"]})),
        (READ[0], "read_file", json.dumps({"output": RESULTS["read_file"]})),
    ]


def test_gemini_calls_without_ids_are_numbered_and_results_matched_by_name() -> None:
    assert gemini_turn(keep_ids=False) == [
        ("call_1", "list_dir", json.dumps({"output": RESULTS["list_dir"]})),
        ("call_0", "read_file", json.dumps({"output": RESULTS["read_file"]})),
    ]


def test_ollama_calls_are_numbered_and_results_matched_by_name() -> None:
    raw, _ = drive(OllamaRouteEncoder(context("ollama_chat")), interleaved_calls(), bench_for())
    calls = next(line["message"]["tool_calls"] for line in ndjson(raw) if line["message"].get("tool_calls"))
    assert all("id" not in call for call in calls)
    body = {
        "model": "bench/core:route",
        "messages": [
            {"role": "user", "content": "Look at the code"},
            {"role": "assistant", "content": "", "tool_calls": calls},
            *[
                {
                    "role": "tool",
                    "tool_name": c["function"]["name"],
                    "content": RESULTS[c["function"]["name"]],
                }
                for c in reversed(calls)
            ],
        ],
    }
    ask = OllamaChat().parse(body, {})
    sent = upstream_body("org/m-a", ask.messages, ask.route_fields)
    assert paired(sent["messages"]) == [
        ("call_1", "list_dir", RESULTS["list_dir"]),
        ("call_0", "read_file", RESULTS["read_file"]),
    ]
    assistant = sent["messages"][1]
    assert [json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"]] == [
        json.loads(READ[2]),
        json.loads(LIST[2]),
    ]
