"""Each route encoder's output read by its official SDK, in process (no sockets): an `httpx.MockTransport`
stands in for the gateway, parsing the SDK's request with the existing format module, sending the member a
body built by `upstream_body`, and answering with the route encoder fed a scripted member stream of text and
parallel tool calls whose deltas interleave (A-51, A-52, A-53), or with a turn that failed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import anthropic
import httpx
import httpx2
import ollama
import openai
import pytest
from google import genai
from google.genai import types as genai_types
from openai.types.chat import ChatCompletionMessageFunctionToolCall

from services.gateway.formats.anthropic import Anthropic
from services.gateway.formats.base import Format
from services.gateway.formats.gemini import Gemini
from services.gateway.formats.ollama import OllamaChat
from services.gateway.formats.openai_chat import OpenAIChat
from services.gateway.formats.responses import Responses
from services.gateway.route_mode.answer import context_for
from services.gateway.route_mode.assemble import Chunk
from services.gateway.route_mode.failover import Failover
from services.gateway.route_mode.upstream_request import upstream_body
from tests.unit.gateway.route_mode.member import (
    CONV,
    LIST,
    READ,
    bench_for,
    chunk,
    drive,
    interleaved_calls,
    summarise,
)

BASE = "http://gateway.test"
BENCH = bench_for()
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
WANTED = [(READ[0], READ[1], json.loads(READ[2])), (LIST[0], LIST[1], json.loads(LIST[2]))]


class Gateway:
    """Route mode for one scripted member. `fail` makes every member fail (429s) before its first piece;
    `break_after` cuts the live member's stream after that many chunks (a part-way failure)."""

    def __init__(self, member: Sequence[Chunk], fail: bool = False, break_after: int | None = None) -> None:
        self.member = list(member)
        self.fail = fail
        self.break_after = break_after
        self.sent: list[dict[str, Any]] = []  # what each member was sent

    def route(self, path: str, query: dict[str, str]) -> tuple[Format, dict[str, str]]:
        table: dict[str, Format] = {
            "/v1/chat/completions": OpenAIChat(),
            "/v1/responses": Responses(),
            "/v1/messages": Anthropic(),
            "/api/chat": OllamaChat(),
        }
        if path in table:
            return table[path], {}
        return Gemini(), {"target": path.removeprefix("/v1beta/models/"), **query}

    def answer(self, request: Any) -> tuple[int, bytes, dict[str, str]]:
        fmt, params = self.route(request.url.path, dict(request.url.params))
        body = json.loads(request.content)
        ask = fmt.parse(body, params)
        self.sent.append(upstream_body("org/m-a", ask.messages, ask.route_fields, max_output=4_096))
        encoder = fmt.route_encoder(context_for(ask, "core"))
        if self.fail:
            turn = Failover("core", ["m-a", "m-b"])
            turn.failed("Error: Error code: 429 - rate limit")
            turn.failed("Error: Error code: 429 - rate limit")
            failure = turn.failure()
            error = json.dumps(fmt.error_body(failure.status, failure.message)).encode()
            return failure.status, error, {"content-type": "application/json"}
        headers = {"X-Bench-Conversation": CONV}
        if not ask.stream:
            reply = encoder.reply(summarise(self.member), BENCH)
            return 200, json.dumps(reply.body).encode(), {"content-type": "application/json", **reply.headers}
        headers["content-type"] = encoder.media_type
        if self.break_after is not None:
            raw, _ = drive(encoder, self.member[: self.break_after], BENCH, finish=False)
            turn = Failover("core", ["m-a"])
            turn.went_live()
            failure = turn.part_way("stream cut before [DONE]")
            return 200, raw + encoder.error(failure.status, failure.message), headers
        raw, _ = drive(encoder, self.member, BENCH, keepalive=True)
        return 200, raw, headers

    def __call__(self, request: httpx.Request) -> httpx.Response:
        status, content, headers = self.answer(request)
        return httpx.Response(status, content=content, headers=headers)

    def httpx2(self, request: httpx2.Request) -> httpx2.Response:
        status, content, headers = self.answer(request)
        return httpx2.Response(status, content=content, headers=headers)


def openai_client(gateway: Gateway) -> openai.OpenAI:
    http = httpx2.Client(transport=httpx2.MockTransport(gateway.httpx2))
    return openai.OpenAI(base_url=f"{BASE}/v1", api_key="k", max_retries=0, http_client=http)


def anthropic_client(gateway: Gateway) -> anthropic.Anthropic:
    http = httpx2.Client(transport=httpx2.MockTransport(gateway.httpx2))
    return anthropic.Anthropic(base_url=BASE, api_key="k", max_retries=0, http_client=http)


def gemini_client(gateway: Gateway) -> genai.Client:
    options = genai_types.HttpOptions(
        base_url=BASE, httpx_client=httpx.Client(transport=httpx.MockTransport(gateway))
    )
    return genai.Client(api_key="k", http_options=options)


# ---------------------------------------------------------------- OpenAI chat


CHAT_TOOLS: Any = [
    {"type": "function", "function": {"name": n, "parameters": SCHEMA}} for n in ("read_file", "list_dir")
]


def test_openai_chat_stream_and_reply_through_the_sdk() -> None:
    gateway = Gateway(interleaved_calls("Let me look."))
    client = openai_client(gateway)
    messages: Any = [{"role": "user", "content": "Look at the code"}]
    with client.chat.completions.stream(
        model="bench/core:route", messages=messages, tools=CHAT_TOOLS, max_tokens=32_000, seed=3
    ) as stream:
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.content == "Let me look." and final.choices[0].finish_reason == "tool_calls"
    assert [
        (c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []
    ] == WANTED
    assert final.model == "bench/core" and final.usage and final.usage.prompt_tokens == 321
    assert gateway.sent[-1]["max_tokens"] == 4_096 and gateway.sent[-1]["seed"] == 3
    assert gateway.sent[-1]["tools"] == CHAT_TOOLS
    chunks = list(client.chat.completions.create(model="bench/core:route", messages=messages, stream=True))
    assert chunks[-1].choices == [] and chunks[-1].model_extra and chunks[-1].model_extra["bench"] == BENCH
    raw = client.chat.completions.with_raw_response.create(model="bench/core:route", messages=messages)
    assert raw.headers["x-bench-model"] == "m-a" and raw.headers["x-bench-conversation"] == CONV
    done = raw.parse()
    calls = done.choices[0].message.tool_calls or []
    functions = [c for c in calls if isinstance(c, ChatCompletionMessageFunctionToolCall)]
    assert [(c.id, c.function.name) for c in functions] == [w[:2] for w in WANTED]


def test_openai_chat_errors_through_the_sdk() -> None:
    with pytest.raises(openai.RateLimitError) as caught:
        openai_client(Gateway([], fail=True)).chat.completions.create(
            model="bench/core:route", messages=[{"role": "user", "content": "x"}], stream=True
        )
    assert "no member of bench/core answered" in caught.value.message
    broken = Gateway(interleaved_calls("Let me look."), break_after=3)
    with pytest.raises(openai.APIError) as part_way:
        list(
            openai_client(broken).chat.completions.create(
                model="bench/core:route", messages=[{"role": "user", "content": "x"}], stream=True
            )
        )
    assert "failed part way" in part_way.value.message


# ---------------------------------------------------------------- Responses


def test_responses_through_the_sdk_with_a_custom_tool() -> None:
    patch = "*** Begin Patch\n*** End Patch\n"
    gateway = Gateway(
        interleaved_calls("On it.", calls=[("call_patch", "apply_patch", json.dumps({"input": patch})), READ])
    )
    client = openai_client(gateway)
    tools: Any = [
        {"type": "custom", "name": "apply_patch", "description": "Apply a patch"},
        {"type": "function", "name": "read_file", "parameters": SCHEMA, "strict": False},
    ]
    with client.responses.stream(model="bench/core:route", input="Fix it", tools=tools) as stream:
        final = stream.get_final_response()
    assert final.output_text == "On it."
    kinds = [(item.type, getattr(item, "call_id", None)) for item in final.output]
    assert kinds == [("message", None), ("custom_tool_call", "call_patch"), ("function_call", READ[0])]
    custom = final.output[1]
    assert custom.type == "custom_tool_call" and custom.input == patch and custom.name == "apply_patch"
    function = final.output[2]
    assert function.type == "function_call" and json.loads(function.arguments) == json.loads(READ[2])
    upstream_tool = gateway.sent[-1]["tools"][0]["function"]
    assert upstream_tool["parameters"]["required"] == ["input"]  # a one-string-input function upstream
    events = list(client.responses.create(model="bench/core:route", input="Fix it", tools=tools, stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    done = client.responses.create(model="bench/core:route", input="Fix it", tools=tools)
    assert [item.type for item in done.output] == ["message", "custom_tool_call", "function_call"]
    with pytest.raises(openai.RateLimitError):
        openai_client(Gateway([], fail=True)).responses.create(model="bench/core:route", input="x")


def test_responses_through_the_sdk_with_a_namespace_and_a_hosted_tool() -> None:  # RM-5, RM-7, X-2
    spawn = ("call_spawn", "multi_agent_v1__spawn_agent", json.dumps({"message": "check the tests"}))
    gateway = Gateway(interleaved_calls(calls=[spawn, READ]))
    client = openai_client(gateway)
    tools: Any = [
        {"type": "namespace", "name": "multi_agent_v1", "description": "Sub-agents.",
         "tools": [{"type": "function", "name": "spawn_agent", "parameters": SCHEMA}]},
        {"type": "function", "name": "read_file", "parameters": SCHEMA},
        {"type": "web_search", "external_web_access": False},
    ]
    with client.responses.stream(model="bench/core:route", input="Delegate", tools=tools) as stream:
        final = stream.get_final_response()
    calls = [(i.name, i.namespace, i.call_id) for i in final.output if i.type == "function_call"]
    assert calls == [("spawn_agent", "multi_agent_v1", "call_spawn"), ("read_file", None, READ[0])]
    assert [t["function"]["name"] for t in gateway.sent[-1]["tools"]] == [spawn[1], "read_file"]
    raw = client.responses.with_raw_response.create(model="bench/core:route", input="Delegate", tools=tools)
    assert raw.headers["X-Bench-Dropped-Tools"] == "web_search"
    assert [(i.type, getattr(i, "namespace", None)) for i in raw.parse().output] == [
        ("function_call", "multi_agent_v1"), ("function_call", None)]


# ---------------------------------------------------------------- Anthropic


ANTHROPIC_TOOLS: Any = [{"name": n, "input_schema": SCHEMA} for n in ("read_file", "list_dir")]


def test_anthropic_through_the_sdk() -> None:
    gateway = Gateway(interleaved_calls("Let me look."))
    client = anthropic_client(gateway)
    messages: Any = [{"role": "user", "content": "Look at the code"}]
    with client.messages.stream(
        model="bench/core:route", max_tokens=32_000, messages=messages, tools=ANTHROPIC_TOOLS
    ) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert streamed == "Let me look."
    assert (
        final.stop_reason == "tool_use"
        and final.usage.output_tokens == 45
        and final.usage.input_tokens == 321
    )
    assert final.content[0].type == "text"
    calls = [(b.id, b.name, b.input) for b in final.content if b.type == "tool_use"]
    assert calls == WANTED
    assert gateway.sent[-1]["max_tokens"] == 4_096
    done = client.messages.create(
        model="bench/core:route", max_tokens=100, messages=messages, tools=ANTHROPIC_TOOLS
    )
    assert [(b.id, b.name, b.input) for b in done.content if b.type == "tool_use"] == WANTED
    with pytest.raises(anthropic.RateLimitError) as caught:
        anthropic_client(Gateway([], fail=True)).messages.create(
            model="bench/core:route", max_tokens=5, messages=messages
        )
    assert caught.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    broken = Gateway(interleaved_calls("Let me look."), break_after=3)
    with pytest.raises(anthropic.APIStatusError) as part_way:
        with anthropic_client(broken).messages.stream(
            model="bench/core:route", max_tokens=5, messages=messages
        ) as stream:
            stream.get_final_message()
    assert "failed part way" in str(part_way.value)


# ---------------------------------------------------------------- Gemini


def test_gemini_through_the_sdk() -> None:
    gateway = Gateway(interleaved_calls("Let me look."))
    client = gemini_client(gateway)
    declarations = [
        genai_types.FunctionDeclaration(name=n, parameters_json_schema=SCHEMA)
        for n in ("read_file", "list_dir")
    ]
    config = genai_types.GenerateContentConfig(
        tools=[genai_types.Tool(function_declarations=declarations)],
        automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True),
    )
    chunks = list(
        client.models.generate_content_stream(model="bench/core:route", contents="Look", config=config)
    )
    assert "".join(c.text or "" for c in chunks if not c.function_calls) == "Let me look."
    calls = chunks[-1].function_calls or []
    assert [(c.id, c.name, c.args) for c in calls] == WANTED
    assert chunks[-1].usage_metadata and chunks[-1].usage_metadata.prompt_token_count == 321
    done = client.models.generate_content(model="bench/core:route", contents="Look", config=config)
    assert [(c.id, c.name, c.args) for c in done.function_calls or []] == WANTED
    assert done.sdk_http_response and done.sdk_http_response.headers
    assert done.sdk_http_response.headers["x-bench-model"] == "m-a"
    cut = Gateway([chunk({"content": "trunc"}, "length")])
    last = list(gemini_client(cut).models.generate_content_stream(model="bench/core:route", contents="x"))[-1]
    assert last.candidates and last.candidates[0].finish_reason == genai_types.FinishReason.MAX_TOKENS
    with pytest.raises(genai.errors.ClientError) as caught:
        gemini_client(Gateway([], fail=True)).models.generate_content(model="bench/core:route", contents="x")
    assert caught.value.code == 429


# ---------------------------------------------------------------- Ollama


def test_ollama_through_the_sdk() -> None:
    gateway = Gateway(interleaved_calls("Let me look."))
    client = ollama.Client(host=BASE, transport=httpx.MockTransport(gateway))
    tools: Any = [
        {"type": "function", "function": {"name": n, "parameters": SCHEMA}} for n in ("read_file", "list_dir")
    ]
    lines = list(
        client.chat(
            model="bench/core:route", messages=[{"role": "user", "content": "Look"}], tools=tools, stream=True
        )
    )
    assert "".join(line.message.content or "" for line in lines) == "Let me look."
    calls = [c for line in lines for c in line.message.tool_calls or []]
    assert [(c.function.name, dict(c.function.arguments)) for c in calls] == [w[1:] for w in WANTED]
    assert lines[-1].done and lines[-1].done_reason == "stop" and lines[-1].eval_count == 45
    done = client.chat(
        model="bench/core:route", messages=[{"role": "user", "content": "Look"}], tools=tools, stream=False
    )
    assert [c.function.name for c in done.message.tool_calls or []] == ["read_file", "list_dir"]
    with pytest.raises(ollama.ResponseError) as caught:
        ollama.Client(host=BASE, transport=httpx.MockTransport(Gateway([], fail=True))).chat(
            model="bench/core:route", messages=[{"role": "user", "content": "x"}], stream=False
        )
    assert caught.value.status_code == 429 and "no member of bench/core answered" in caught.value.error
