"""Route mode through the official `openai` SDK against a whole stack (SPEC A-43..A-50, A-55..A-57): the
member's tool-call stream relayed as it sent it, failover before the first piece, statuses kept, errors in
the stream after it, sticky conversations, the request passed on, skips, headers and what is recorded."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import openai
import pytest

from cli.stack import Stack
from shared import subjects
from tests.e2e.conftest import Admin
from tests.e2e.route_support import (
    FIRST_PIECE_S,
    SYSTEM,
    Bench,
    route_stack,
    sse_data,
    stream_events,
    stream_raw,
)
from tests.fakes.provider import FakeProvider
from tests.fakes.route_tools import PARALLEL_CALLS, interleaved_tool_deltas

TOOLS = [{"type": "function", "function": {"name": name, "description": f"{name} tool",
                                           "parameters": {"type": "object", "properties": {}}}}
         for _, name, _ in PARALLEL_CALLS]
PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"


@dataclass
class Rig:
    stack: Stack
    bench: Bench
    client: Any  # openai.OpenAI, read loosely: tests send bodies the SDK's types do not spell out


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    provider = FakeProvider(log_path=tmp_path_factory.mktemp("fake") / "provider.log").start()
    try:
        with route_stack(tmp_path_factory.mktemp("stack"), provider) as stack:
            client = openai.OpenAI(base_url=stack.url + "/v1", api_key="unused", max_retries=0, timeout=60)
            yield Rig(stack, Bench(Admin(stack.url), provider), client)
    finally:
        provider.stop()


def messages(first: str = "fix the flaky test", *later: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": first}, *later]


def route(name: str) -> str:
    return f"bench/{name}:route"


def bench_of(completion: Any) -> dict[str, Any]:
    found: dict[str, Any] = completion.model_extra["bench"]
    return found


def calls_of(stream: Any) -> dict[int, list[str]]:
    """Tool calls assembled from SDK stream chunks by index: [id, name, arguments]."""
    calls: dict[int, list[str]] = {}
    for chunk in stream:
        for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            call = calls.setdefault(delta.index, ["", "", ""])
            call[0] = call[0] or delta.id or ""
            call[1] = call[1] or (delta.function.name or "")
            call[2] += delta.function.arguments or ""
    return calls


def test_a43_a_tool_call_stream_is_relayed_as_the_member_sent_it(rig: Rig) -> None:
    name, (m1,) = rig.bench.members("parallel_tools")
    body = {"model": route(name), "messages": messages(), "tools": TOOLS, "stream": True}
    resp, raw = stream_raw(rig.stack.url, "/v1/chat/completions", body)
    assert resp.status_code == 200 and resp.headers["x-bench-model"] == m1
    data = sse_data(raw)
    assert data[-1] == "[DONE]"
    chunks, closing = data[:-2], data[-2]
    assert all(c["model"] == f"bench/{name}" and c["object"] == "chat.completion.chunk" for c in data[:-1])
    assert {c["id"] for c in data[:-1]} == {chunks[0]["id"]} and chunks[0]["id"].startswith("chatcmpl-fake")
    deltas = [call for c in chunks for call in c["choices"][0]["delta"].get("tool_calls") or []]
    assert deltas == interleaved_tool_deltas()  # byte for byte, interleaved as upstream sent them
    assert [c["choices"][0]["delta"].get("role") for c in chunks].count("assistant") == 1  # the member's own
    assert closing["choices"] == []
    assert closing["bench"]["conversation"] == resp.headers["x-bench-conversation"]
    assert closing["usage"]["prompt_tokens"] > 0  # the member's usage rides on the closing chunk

    stream = rig.client.chat.completions.create(model=route(name), messages=messages("another"), tools=TOOLS,
                                                stream=True)
    assert [tuple(c) for _, c in sorted(calls_of(stream).items())] == list(PARALLEL_CALLS)


def test_a44_a_rate_limited_member_is_skipped_invisibly(rig: Rig) -> None:
    name, (m1, m2) = rig.bench.members("rate_limit", "ok")
    raw = rig.client.chat.completions.with_raw_response.create(model=route(name), messages=messages())
    completion = raw.parse()
    bench = bench_of(completion)
    assert completion.choices[0].message.content == f"{m2} says: fix the flaky test"
    assert bench["alias"] == m2 and bench["failed_over"][0]["alias"] == m1
    assert "429" in bench["failed_over"][0]["error"]
    assert raw.headers["x-bench-model"] == m2 and raw.headers["x-bench-conversation"] == bench["conversation"]


def test_a45_a_silent_member_and_an_empty_reply_are_failed_over(rig: Rig) -> None:
    name, (m1, m2) = rig.bench.members("hang", "ok")
    with rig.client.chat.completions.with_streaming_response.create(
        model=route(name), messages=messages(), stream=True
    ) as resp:
        assert resp.headers["x-bench-model"] == m2  # the grace outlasts the silent member's window
        chunks = list(resp.parse())
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == f"{m2} says: fix the flaky test"
    failed = chunks[-1].model_extra["bench"]["failed_over"]
    assert failed[0]["alias"] == m1 and failed[0]["error"].startswith(f"nothing in {FIRST_PIECE_S:g}s")

    name, (m1, m2) = rig.bench.members("empty", "ok")
    bench = bench_of(rig.client.chat.completions.create(model=route(name), messages=messages()))
    assert bench["alias"] == m2 and bench["failed_over"][0]["alias"] == m1


def test_a46_every_member_failing_keeps_its_status_even_streamed(rig: Rig) -> None:
    name, _ = rig.bench.members("rate_limit", "rate_limit")
    with pytest.raises(openai.RateLimitError) as limited:
        rig.client.chat.completions.create(model=route(name), messages=messages(), stream=True)
    assert limited.value.status_code == 429 and f"no member of bench/{name} answered" in str(limited.value)

    name, _ = rig.bench.members("rate_limit", "error_500")
    with pytest.raises(openai.InternalServerError) as failed:
        rig.client.chat.completions.create(model=route(name), messages=messages(), stream=True)
    assert failed.value.status_code == 502


def test_a46_members_failing_after_the_grace_end_the_stream_with_the_error(rig: Rig) -> None:
    name, _ = rig.bench.members("hang", "hang", "hang")  # 3 windows outlast the grace: the 200 went out
    resp, raw = stream_raw(rig.stack.url, "/v1/chat/completions",
                           {"model": route(name), "messages": messages(), "stream": True})
    assert resp.status_code == 200 and "x-bench-model" not in resp.headers
    assert raw.startswith(": keep-alive")
    data = sse_data(raw)
    assert data[-1] == "[DONE]" and data[-2]["error"]["code"] == 502
    assert data[-2]["error"]["message"].startswith(f"no member of bench/{name} answered")


def test_a47_a_failure_after_the_first_piece_is_an_error_in_the_stream(rig: Rig) -> None:
    name, (m1, _) = rig.bench.members("midstream_error", "ok")
    stream = rig.client.chat.completions.create(model=route(name), messages=messages(), stream=True)
    text = ""
    with pytest.raises(openai.APIError) as broke:
        for chunk in stream:
            text += chunk.choices[0].delta.content or "" if chunk.choices else ""
    assert text and f"{m1} says: fix the flaky test".startswith(text)  # what the member wrote, then the error
    assert f"{m1} failed part way through the turn" in broke.value.message


def test_a48_a49_turns_of_one_conversation_stick_to_one_member(rig: Rig) -> None:
    name, _ = rig.bench.members("ok", "ok", "ok")
    first = rig.client.chat.completions.with_raw_response.create(model=route(name), messages=messages())
    one = bench_of(first.parse())
    reply = first.parse().choices[0].message.content
    later = messages("fix the flaky test", {"role": "assistant", "content": reply},
                     {"role": "user", "content": "now run it"})
    second = rig.client.chat.completions.with_raw_response.create(model=route(name), messages=later)
    two = bench_of(second.parse())
    assert two["conversation"] == one["conversation"] == second.headers["x-bench-conversation"]
    assert (one["turn"], two["turn"]) == (1, 2) and two["alias"] == one["alias"]
    assert one["call"] == two["call"] == f"{one['conversation']}.1"
    other = bench_of(rig.client.chat.completions.create(model=route(name), messages=messages("a new task")))
    assert other["conversation"] != one["conversation"] and other["turn"] == 1


def test_a50_the_request_is_passed_on_with_its_budget_cut(rig: Rig) -> None:
    name, (m1,) = rig.bench.members("ok", max_output=100)
    fields: dict[str, Any] = {"tool_choice": {"type": "function", "function": {"name": "read_file"}},
                              "seed": 7, "response_format": {"type": "json_object"}, "temperature": 0.3,
                              "top_p": 0.9, "stop": ["END"], "parallel_tool_calls": False}
    rig.client.chat.completions.create(model=route(name), messages=messages(), tools=TOOLS, max_tokens=32000,
                                       **fields)
    sent = rig.bench.sent_to(m1)[-1]
    assert sent["max_tokens"] == 100 and sent["model"] == m1 and sent["tools"] == TOOLS
    assert {k: sent[k] for k in fields} == fields
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["messages"] == messages()


def test_a55_members_that_cannot_take_the_turn_are_skipped_with_why(rig: Rig) -> None:
    admin, provider = rig.bench.admin, rig.bench.provider
    admin.post("/api/endpoint", {"name": "other-api", "base": provider.base_url, "api": "anthropic"})
    tag = f"s{uuid.uuid4().hex[:6]}"
    able, unsure, no_tools, ad_hoc, looker, elsewhere, blind, gone = (
        f"{tag}-{role}"
        for role in ("able", "unsure", "notools", "adhoc", "looker", "other", "blind", "gone"))
    admin.model(able, alias=able, tools=True, vision=True)
    admin.model(unsure, alias=unsure)
    admin.model(no_tools, alias=no_tools, tools=False)
    admin.model(ad_hoc, alias=ad_hoc, tools=True, ad_hoc=True)
    admin.model(looker, alias=looker, tools=True, role="vision")
    admin.model(elsewhere, "other-api", alias=elsewhere, tools=True)
    admin.model(blind, alias=blind, tools=True, vision=False)
    admin.model(gone, alias=gone, tools=True)
    admin.collection(f"{tag}-a", [gone, unsure, no_tools, ad_hoc, able], reply="route")
    admin.collection(f"{tag}-b", [looker, elsewhere, able], reply="route")
    admin.collection(f"{tag}-c", [blind, able], reply="route")
    admin.collection(f"{tag}-d", [no_tools, ad_hoc], reply="route")
    admin.post("/api/remove", {"alias": gone})

    def skipped(collection: str, asked: list[dict[str, Any]]) -> dict[str, str]:
        asking = rig.client.chat.completions.create(model=route(collection), messages=asked, tools=TOOLS)
        bench = bench_of(asking)
        assert bench["alias"] == able
        return {s["alias"]: s["why"] for s in bench["skipped"]}

    why = skipped(f"{tag}-a", messages())
    assert why[gone].startswith("retired from the bench on") and "ad hoc" in why[ad_hoc]
    assert "Tool calling" in why[unsure] and why[no_tools].startswith("does not call tools")
    why = skipped(f"{tag}-b", messages())
    assert "vision specialist" in why[looker] and "reached through the anthropic API" in why[elsewhere]
    pictured = [{"role": "user", "content": [{"type": "text", "text": "what is this"},
                                             {"type": "image_url", "image_url": {"url": PNG}}]}]
    assert skipped(f"{tag}-c", pictured)[blind].startswith("does not take images")

    with pytest.raises(openai.BadRequestError) as refused:
        rig.client.chat.completions.create(model=route(f"{tag}-d"), messages=messages(), tools=TOOLS)
    assert f"no member of bench/{tag}-d can take this request" in str(refused.value)


def test_a56_a57_one_offload_per_answering_model_and_a_record_per_turn(rig: Rig) -> None:
    name, (m1, m2) = rig.bench.members("ok", "ok")
    provider = rig.bench.provider
    first = bench_of(rig.client.chat.completions.create(model=route(name), messages=messages()))
    conv, answering = first["conversation"], first["alias"]
    other = m2 if answering == m1 else m1
    provider.set_model(answering, "rate_limit")  # turn 2 fails over to the other model
    later = messages("fix the flaky test", {"role": "assistant", "content": "ok"},
                     {"role": "user", "content": "go on"})
    second = bench_of(rig.client.chat.completions.create(model=route(name), messages=later))
    provider.set_model(answering, "ok")
    third = bench_of(rig.client.chat.completions.create(model=route(name), messages=later))
    assert (second["alias"], third["alias"]) == (other, other)  # the conversation's model is whoever answered
    assert (second["call"], third["call"]) == (f"{conv}.2", f"{conv}.2")

    offloads = stream_events(rig.stack, f"{subjects.SEAT_PREFIX}.{conv}.*")
    assert sorted((e.call, e.alias, e.purpose) for e in offloads) == [
        (f"{conv}.1", answering, "route"), (f"{conv}.2", other, "route")]
    records = stream_events(rig.stack, subjects.route_subject(conv))
    assert [(r.turn, r.alias, r.status, r.task) for r in records] == [
        (1, answering, "ok", "fix the flaky test"), (2, other, "ok", "fix the flaky test"),
        (3, other, "ok", "fix the flaky test")]
    assert not any(SYSTEM in r.model_dump_json() for r in records)  # never the prompt
