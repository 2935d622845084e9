"""Route mode in the other formats, through their official SDKs against a whole stack (SPEC A-51..A-54):
the member streams two parallel tool calls whose argument deltas interleave, after a little text, and each
format must hand its client both calls whole, in its own shape, with the member's own usage."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anthropic
import ollama
import openai
import pytest
from google import genai
from google.genai import types as genai_types

from tests.e2e.conftest import Admin
from tests.e2e.route_support import SYSTEM, Bench, route_stack
from tests.fakes.behaviour import estimate_tokens, text_tokens
from tests.fakes.provider import FakeProvider
from tests.fakes.route_tools import PARALLEL_CALLS

TEXT = "Reading both."
WANTED = [(call_id, name, json.loads(arguments)) for call_id, name, arguments in PARALLEL_CALLS]
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}


@dataclass
class Rig:
    bench: Bench
    anthropic: Any
    openai: Any
    gemini: Any
    ollama: Any


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    provider = FakeProvider(log_path=tmp_path_factory.mktemp("fake") / "provider.log").start()
    try:
        with route_stack(tmp_path_factory.mktemp("stack"), provider) as stack:
            url = stack.url
            yield Rig(
                bench=Bench(Admin(url), provider),
                anthropic=anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0, timeout=60),
                openai=openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0, timeout=60),
                gemini=genai.Client(api_key="unused",
                                    http_options=genai_types.HttpOptions(base_url=url, timeout=60_000)),
                ollama=ollama.Client(host=url, timeout=60),
            )
    finally:
        provider.stop()


def calling(rig: Rig) -> tuple[str, str]:
    """A route collection whose member writes a little text, then the two interleaved calls."""
    name, (member,) = rig.bench.members("parallel_tools")
    rig.bench.provider.set_model(member, "parallel_tools", answer=TEXT)
    return name, member


def member_usage(rig: Rig, member: str) -> tuple[int, int]:
    """The counts the fake member reported for the request it was last sent."""
    sent = rig.bench.sent_to(member)[-1]
    return estimate_tokens(json.dumps(sent["messages"])), text_tokens(TEXT)


def test_a51_anthropic_gets_each_call_as_a_tool_use_block_with_one_whole_json_delta(rig: Rig) -> None:
    name, member = calling(rig)
    tools = [{"name": n, "description": f"{n} tool", "input_schema": SCHEMA} for _, n, _ in PARALLEL_CALLS]
    with rig.anthropic.messages.stream(
        model=f"bench/{name}", max_tokens=32000, system=SYSTEM, tools=tools,
        messages=[{"role": "user", "content": "fix the flaky test"}],
        extra_headers={"anthropic-beta": "interleaved-thinking-2025-05-14"},
    ) as stream:
        events = list(stream)
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use" and final.content[0].text == TEXT
    assert [(b.id, b.name, b.input) for b in final.content[1:]] == WANTED
    deltas = [e for e in events if e.type == "content_block_delta" and e.delta.type == "input_json_delta"]
    whole = [(e.index, json.loads(e.delta.partial_json)) for e in deltas]
    assert whole == [(1, WANTED[0][2]), (2, WANTED[1][2])]  # one delta per call, holding all of it
    assert (final.usage.input_tokens, final.usage.output_tokens) == member_usage(rig, member)

    plain = rig.anthropic.messages.create(model=f"bench/{name}", max_tokens=1024, system=SYSTEM, tools=tools,
                                          messages=[{"role": "user", "content": "another task"}])
    assert plain.stop_reason == "tool_use" and [(b.id, b.name, b.input) for b in plain.content[1:]] == WANTED


def test_a52_a53_responses_gets_whole_calls_and_a_custom_tool_call_with_its_input(rig: Rig) -> None:
    name, member = calling(rig)
    tools = [{"type": "custom", "name": "read_file", "description": "Read a file"},
             {"type": "function", "name": "list_dir", "parameters": SCHEMA}]
    events = list(rig.openai.responses.create(model=f"bench/{name}", instructions=SYSTEM, tools=tools,
                                              input="fix the flaky test", stream=True))
    done = events[-1].response
    assert events[-1].type == "response.completed" and done.status == "completed"
    kinds = [(item.type, getattr(item, "call_id", None)) for item in done.output]
    assert kinds == [("message", None), ("custom_tool_call", "call_read"), ("function_call", "call_list")]
    assert done.output[0].content[0].text == TEXT
    assert done.output[1].input == PARALLEL_CALLS[0][2]  # the custom tool's one string input
    assert json.loads(done.output[2].arguments) == WANTED[1][2]
    assert [e.type for e in events].count("response.function_call_arguments.delta") == 1
    assert (done.usage.input_tokens, done.usage.output_tokens) == member_usage(rig, member)
    upstream = {t["function"]["name"]: t["function"] for t in rig.bench.sent_to(member)[-1]["tools"]}
    one_string = {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}
    assert upstream["read_file"]["parameters"] == one_string


@pytest.mark.parametrize("stream", [False, True])
def test_responses_namespace_flattened_and_hosted_tools_and_items_left_out_and_named(
    rig: Rig, stream: bool
) -> None:
    """X-2, RM-5, RM-8: what Codex's default configuration sends. The member calls `read_file` and
    `list_dir`, names it was not offered (it was offered `fs__…`): they go back as it wrote them."""
    name, member = calling(rig)
    members = [{"type": "function", "name": n, "parameters": SCHEMA} for n in ("read_file", "list_dir")]
    tools = [{"type": "web_search", "external_web_access": False},
             {"type": "namespace", "name": "fs", "description": "Files.", "tools": members}]
    history = [{"role": "user", "content": "what changed upstream?"},
               {"type": "web_search_call", "id": "ws_1", "status": "completed",
                "action": {"type": "search", "query": "changes"}}]
    raw = rig.openai.responses.with_raw_response.create(
        model=f"bench/{name}", instructions=SYSTEM, tools=tools, input=history, stream=stream)
    assert raw.headers["x-bench-dropped-tools"] == "web_search"
    assert raw.headers["x-bench-dropped-items"] == "web_search_call"
    parsed = raw.parse()
    done = list(parsed)[-1].response if stream else parsed
    calls = [(i.name, getattr(i, "namespace", None)) for i in done.output if i.type == "function_call"]
    assert calls == [("read_file", None), ("list_dir", None)]
    sent = rig.bench.sent_to(member)[-1]
    assert [t["function"]["name"] for t in sent["tools"]] == ["fs__read_file", "fs__list_dir"]
    assert sent["messages"][1:] == [{"role": "user", "content": "what changed upstream?"}]


def test_a52_gemini_gets_the_calls_whole_in_the_last_chunk(rig: Rig) -> None:
    name, _ = calling(rig)
    declarations = [genai_types.FunctionDeclaration(name=n, description=f"{n} tool")
                    for _, n, _ in PARALLEL_CALLS]
    config = genai_types.GenerateContentConfig(
        system_instruction=SYSTEM, tools=[genai_types.Tool(function_declarations=declarations)],
        automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True))
    chunks = list(rig.gemini.models.generate_content_stream(model=f"bench/{name}", contents="fix it",
                                                            config=config))
    text = "".join(p.text or "" for c in chunks for p in c.candidates[0].content.parts if not p.function_call)
    calls = [p.function_call for p in chunks[-1].candidates[0].content.parts if p.function_call]
    assert text == TEXT and [(c.id, c.name, c.args) for c in calls] == WANTED


def test_a54_gemini_calls_without_ids_are_numbered_and_results_matched_by_name(rig: Rig) -> None:
    name, member = calling(rig)
    called = genai_types.FunctionCall(name="read_file", args={"path": "a.py"})
    result = genai_types.FunctionResponse(name="read_file", response={"content": "print(1)"})
    contents = [
        genai_types.Content(role="user", parts=[genai_types.Part(text="fix it")]),
        genai_types.Content(role="model", parts=[genai_types.Part(function_call=called)]),
        genai_types.Content(role="user", parts=[genai_types.Part(function_response=result)]),
    ]
    declarations = [genai_types.FunctionDeclaration(name="read_file", description="Read a file")]
    config = genai_types.GenerateContentConfig(
        tools=[genai_types.Tool(function_declarations=declarations)],
        automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True))
    rig.gemini.models.generate_content(model=f"bench/{name}", contents=contents, config=config)
    sent = rig.bench.sent_to(member)[-1]["messages"]
    assert sent[1]["tool_calls"][0]["id"] == "call_0"
    assert (sent[2]["role"], sent[2]["tool_call_id"]) == ("tool", "call_0")


def test_a52_a54_ollama_gets_whole_calls_and_numbers_its_own(rig: Rig) -> None:
    name, member = calling(rig)
    tools = [{"type": "function", "function": {"name": n, "description": f"{n} tool", "parameters": SCHEMA}}
             for _, n, _ in PARALLEL_CALLS]
    asked = [{"role": "user", "content": "fix it"}]
    done = rig.ollama.chat(model=f"bench/{name}", messages=asked, tools=tools, stream=False)
    assert done.message.content == TEXT
    assert [(c.function.name, dict(c.function.arguments)) for c in done.message.tool_calls] == [
        (n, a) for _, n, a in WANTED]

    later = [{"role": "user", "content": "fix it"},
             {"role": "assistant", "content": "", "tool_calls": [
                 {"function": {"name": "list_dir", "arguments": {"dir": "tests"}}}]},
             {"role": "tool", "content": "test_a.py", "tool_name": "list_dir"}]
    lines = list(rig.ollama.chat(model=f"bench/{name}", messages=later, tools=tools, stream=True))
    assert lines[-1].done and any(line.message.tool_calls for line in lines)
    sent = rig.bench.sent_to(member)[-1]["messages"]
    assert sent[1]["tool_calls"][0]["id"] == "call_0" and sent[2]["tool_call_id"] == "call_0"
