"""The five other API formats against a whole stack, each through its official SDK, plain and streamed
(H-G3..H-G9, S-1, S-5, A-31..A-41), with the raw wire read where an SDK hides the shape. Models made here
are ad hoc (never explorers elsewhere); the collection has five members, so no explorer chair."""

from __future__ import annotations

import base64
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

from cli.stack import Stack
from tests.e2e.clients import (
    Clients,
    check_all_text,
    clients,
    gemini_text,
    json_array,
    ndjson,
    sse_frames,
)
from tests.e2e.conftest import Admin, logs_on_failure
from tests.fakes.provider import FakeProvider

MEMBERS = ["fmt-a", "fmt-b", "fmt-c", "fmt-d", "fmt-e"]
PROMPT = "Why is the sky blue?"


@dataclass
class Env:
    stack: Stack
    provider: FakeProvider
    sdk: Clients


@pytest.fixture(scope="module")
def env(stack: Stack, provider: FakeProvider) -> Iterator[Env]:
    with logs_on_failure(stack.home):
        admin = Admin(stack.url)
        for served in MEMBERS:
            admin.model(served, ad_hoc=True, vision=True, context_window=128_000)
        admin.model("fmt-blind", ad_hoc=True, vision=False)
        admin.collection("fmt", MEMBERS, description="every format", tags=["formats"])
        admin.collection("fmt-mixed", ["fmt-a", "fmt-blind"], description="one of them is blind")
        yield Env(stack, provider, clients(stack.url))


def estimate(text: str) -> int:
    """P-5, as a client can compute it."""
    return max(1, int(len(text) / 4 * 1.1)) if text else 0


def fmt_calls(provider: FakeProvider) -> int:
    return sum(1 for r in provider.requests() if str(r["body"].get("model", "")).startswith("fmt-"))


# ---------------------------------------------------------------- OpenAI legacy completions (H-G3)


def test_completions_plain_and_streamed(env: Env) -> None:
    done = env.sdk.openai.completions.create(model="bench/fmt", prompt=PROMPT, max_tokens=5, temperature=0.1)
    assert done.object == "text_completion" and done.id.startswith("cmpl-") and done.model == "bench/fmt"
    assert done.choices[0].finish_reason == "stop"
    text = done.choices[0].text
    bench = (done.model_extra or {})["bench"]
    check_all_text(text, bench, "bench/fmt")
    assert [s["answer"] for s in bench["seats"]] == [f"{m} says: {PROMPT}" for m in MEMBERS]
    assert done.usage is not None
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (estimate(PROMPT), estimate(text))

    chunks = list(env.sdk.openai.completions.create(model="bench/fmt", prompt=[PROMPT], stream=True))
    streamed = "".join(c.choices[0].text for c in chunks)
    final = chunks[-1]
    assert final.choices[0].finish_reason == "stop" and final.choices[0].text == ""
    check_all_text(streamed, (final.model_extra or {})["bench"], "bench/fmt")


def test_openai_clients_without_v1_in_their_base_url_are_served(env: Env) -> None:
    """H-0: `/completions`, `/chat/completions`, `/responses`, `/models` without `/v1`."""
    bare = openai.OpenAI(base_url=env.stack.url, api_key="unused", max_retries=0, timeout=60)
    assert bare.completions.create(model="bench/fmt", prompt=PROMPT).choices[0].text.startswith("Bench")
    chat = bare.chat.completions.create(model="bench/fmt", messages=[{"role": "user", "content": PROMPT}])
    assert (chat.model_extra or {})["bench"]["collection"] == "bench/fmt"
    assert bare.responses.create(model="bench/fmt", input=PROMPT).status == "completed"
    assert "bench/fmt:merged" in {m.id for m in bare.models.list().data}


# ---------------------------------------------------------------- OpenAI Responses (H-G4, A-32, A-33)


def test_responses_plain(env: Env) -> None:
    done = env.sdk.openai.responses.create(model="bench/fmt", instructions="Be brief.", input=PROMPT)
    assert done.status == "completed" and done.id.startswith("resp_") and done.model == "bench/fmt"
    check_all_text(done.output_text, (done.model_extra or {})["bench"], "bench/fmt")
    assert done.usage is not None
    assert done.usage.input_tokens == estimate("Be brief.\n\n" + PROMPT)
    assert done.usage.output_tokens == estimate(done.output_text)


def test_a32_responses_streamed_events_are_numbered_and_end_completed(env: Env) -> None:
    events = list(env.sdk.openai.responses.create(model="bench/fmt", input=PROMPT, stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert [e.type for e in events[:4]] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    last = events[-1]
    assert last.type == "response.completed"
    assert last.response.output_text == deltas
    check_all_text(deltas, (last.response.model_extra or {})["bench"], "bench/fmt")


def test_a33_responses_previous_response_id_is_refused(env: Env) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        env.sdk.openai.responses.create(model="bench/fmt", input=PROMPT, previous_response_id="resp_1")
    assert "previous_response_id" in str(caught.value)
    raw = env.sdk.http.post(
        "/v1/responses", json={"model": "bench/fmt", "input": "x", "previous_response_id": "r"}
    )
    error = raw.json()["error"]
    assert (raw.status_code, error["type"], error["param"], error["code"]) == (
        400,
        "invalid_request_error",
        None,
        "400",
    )


# ---------------------------------------------------------------- Anthropic Messages (H-G5, H-G6, A-31)


def test_anthropic_plain_and_streamed(env: Env) -> None:
    done = env.sdk.anthropic.messages.create(
        model="bench/fmt",
        max_tokens=50,
        system="Be brief.",
        messages=[{"role": "user", "content": PROMPT}],
    )
    assert (done.type, done.role, done.model, done.stop_reason) == (
        "message",
        "assistant",
        "bench/fmt",
        "end_turn",
    )
    assert done.content[0].type == "text"
    check_all_text(done.content[0].text, (done.model_extra or {})["bench"], "bench/fmt")
    assert done.usage.input_tokens == estimate("Be brief.\n\n" + PROMPT)

    with env.sdk.anthropic.messages.stream(
        model="bench/fmt", max_tokens=50, messages=[{"role": "user", "content": PROMPT}]
    ) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert final.content[0].type == "text" and final.content[0].text == streamed


def test_a31_anthropic_stream_event_order_and_bench(env: Env) -> None:
    body = {
        "model": "bench/fmt",
        "max_tokens": 50,
        "stream": True,
        "messages": [{"role": "user", "content": PROMPT}],
    }
    reply = env.sdk.http.post("/v1/messages", json=body)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")
    events = [(name, data) for name, data in sse_frames(reply.text) if name != "ping"]
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "content_block_start"] and names[-1] == "message_stop"
    assert names[-3:-1] == ["content_block_stop", "message_delta"]
    assert all(name == "content_block_delta" for name in names[2:-3])
    delta = dict(events)["message_delta"]
    assert delta["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    text = "".join(d["delta"]["text"] for n, d in events if n == "content_block_delta")
    check_all_text(text, delta["bench"], "bench/fmt")
    assert dict(events)["message_start"]["message"]["usage"] == {
        "input_tokens": estimate(PROMPT),
        "output_tokens": 0,
    }


def test_a39_token_counts_are_estimates_without_a_model_call(env: Env) -> None:
    before = fmt_calls(env.provider)
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(64)).decode()
    counted = env.sdk.anthropic.messages.count_tokens(
        model="bench/no-such-collection",  # H-G6: no collection check
        system="Be brief.",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": PROMPT},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
                ],
            }
        ],
    )
    # P-5: the image is its placeholder in the text, plus 2,500
    assert counted.input_tokens == estimate(f"Be brief.\n\n{PROMPT}\n\n[image: data URL, 1 KB]") + 2_500
    gemini = env.sdk.gemini.models.count_tokens(model="bench/no-such-collection", contents=PROMPT)
    assert gemini.total_tokens == estimate(PROMPT)
    assert fmt_calls(env.provider) == before


# ---------------------------------------------------------------- Ollama (H-G7, H-G8, A-34, A-35, A-40)


def test_a34_ollama_chat_plain_takes_latest_and_reports_real_durations(env: Env) -> None:
    done = env.sdk.ollama.chat(
        model="bench/fmt:latest",
        stream=False,
        messages=[{"role": "user", "content": PROMPT}],
        options={"temperature": 0.2, "num_predict": 10},
    )
    assert done.done and done.done_reason == "stop" and done.model == "bench/fmt:latest"
    assert (done.total_duration or 0) > 0 and done.eval_duration == done.total_duration
    assert done.message.content and done.message.content.startswith("Bench bench/fmt p")
    raw = env.sdk.http.post(
        "/api/chat",
        json={
            "model": "bench/fmt:latest",
            "stream": False,
            "messages": [{"role": "user", "content": PROMPT}],
        },
    ).json()
    check_all_text(raw["message"]["content"], raw["bench"], "bench/fmt")
    assert raw["created_at"].endswith("Z") and raw["total_duration"] > 0


def test_a34_ollama_streams_ndjson_by_default(env: Env) -> None:
    reply = env.sdk.http.post(
        "/api/chat", json={"model": "bench/fmt", "messages": [{"role": "user", "content": PROMPT}]}
    )
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("application/x-ndjson")
    lines = ndjson(reply.text)
    assert all(not line["done"] for line in lines[:-1]) and lines[-1]["done"] is True
    text = "".join(line["message"]["content"] for line in lines)
    check_all_text(text, lines[-1]["bench"], "bench/fmt")
    streamed = list(
        env.sdk.ollama.chat(model="bench/fmt", messages=[{"role": "user", "content": PROMPT}], stream=True)
    )
    assert streamed[-1].done and "".join(p.message.content or "" for p in streamed).startswith(
        "Bench bench/fmt"
    )


def test_a35_ollama_generate_and_its_context_refusal(env: Env) -> None:
    done = env.sdk.ollama.generate(model="bench/fmt", prompt=PROMPT, system="Be brief.", stream=False)
    assert done.done and (done.response or "").startswith("Bench bench/fmt p")
    lines = list(env.sdk.ollama.generate(model="bench/fmt", prompt=PROMPT, stream=True))
    assert lines[-1].done and "".join(line.response or "" for line in lines).startswith("Bench bench/fmt p")
    with pytest.raises(ollama.ResponseError) as caught:
        env.sdk.ollama.generate(model="bench/fmt", prompt=PROMPT, context=[1, 2, 3], stream=False)
    assert caught.value.status_code == 400 and "/api/chat" in caught.value.error


def test_a40_ollama_tags_version_and_show(env: Env) -> None:
    names = {m.model for m in env.sdk.ollama.list().models}
    assert {"bench/fmt", "bench/fmt:merged", "bench/fmt:route"} <= names
    raw = env.sdk.http.get("/api/tags").json()["models"]
    row = next(m for m in raw if m["name"] == "bench/fmt")
    assert row["size"] == 0 and row["details"]["family"] == "benchwarmers" and len(row["digest"]) == 64
    assert env.sdk.http.get("/api/version").json() == {"version": "0.12.0"}
    shown = env.sdk.ollama.show("fmt:latest")
    assert shown.capabilities == ["completion", "vision"]  # every member sees
    assert shown.modelinfo and shown.modelinfo["benchwarmers.context_length"] == 128_000
    assert env.sdk.ollama.show("bench/fmt-mixed").capabilities == ["completion"]
    with pytest.raises(ollama.ResponseError) as caught:
        env.sdk.ollama.show("bench/no-such-collection")
    assert caught.value.status_code == 404
    missing = env.sdk.http.post("/api/show", json={"model": "nope"})
    assert missing.status_code == 404 and set(missing.json()) == {"error"}


# ---------------------------------------------------------------- Gemini (H-G9, A-36..A-38)


def test_a36_gemini_generate_content_has_no_bench_but_headers(env: Env) -> None:
    done = env.sdk.gemini.models.generate_content(model="bench/fmt", contents=PROMPT)
    assert done.text and done.text.startswith("Bench bench/fmt p")
    assert done.sdk_http_response and done.sdk_http_response.headers
    headers = done.sdk_http_response.headers
    seats = json.loads(headers["x-bench-seats"])
    assert [set(s) for s in seats] == [{"call", "seat", "alias", "status"}] * 5
    assert [s["alias"] for s in seats] == MEMBERS and all(
        s["call"].startswith(headers["x-bench-panel"]) for s in seats
    )
    raw = env.sdk.http.post(
        "/v1beta/models/bench%2Ffmt:generateContent", json={"contents": [{"parts": [{"text": PROMPT}]}]}
    )
    body = raw.json()
    assert (
        "bench" not in body
        and raw.headers["x-bench-panel"] in body["candidates"][0]["content"]["parts"][0]["text"]
    )
    assert body["modelVersion"] == "bench/fmt" and body["candidates"][0]["finishReason"] == "STOP"


def test_a37_gemini_streams_an_array_without_alt_sse_and_events_with_it(env: Env) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}
    array = env.sdk.http.post("/v1beta/models/bench/fmt:streamGenerateContent", json=body)
    assert array.status_code == 200 and array.headers["content-type"].startswith("application/json")
    elements = json_array(array.text)
    assert elements[-1]["candidates"][0]["finishReason"] == "STOP" and "usageMetadata" in elements[-1]
    assert all("bench" not in e for e in elements) and "x-bench-panel" not in array.headers
    assert "".join(gemini_text(e) for e in elements).startswith("Bench bench/fmt p")
    sse = env.sdk.http.post(
        "/v1beta/models/bench/fmt:streamGenerateContent", params={"alt": "sse"}, json=body
    )
    assert sse.headers["content-type"].startswith("text/event-stream")
    chunks = [data for _, data in sse_frames(sse.text)]
    assert "".join(gemini_text(c) for c in chunks).startswith("Bench bench/fmt p")
    streamed = list(env.sdk.gemini.models.generate_content_stream(model="bench/fmt", contents=PROMPT))
    assert "".join(c.text or "" for c in streamed).startswith("Bench bench/fmt p")


def test_a38_an_unknown_gemini_method_is_404_naming_generate_content(env: Env) -> None:
    with pytest.raises(genai.errors.ClientError) as caught:
        env.sdk.gemini.models.embed_content(model="bench/fmt", contents=PROMPT)
    assert caught.value.code == 404 and "generateContent" in str(caught.value)
    raw = env.sdk.http.post("/v1beta/models/bench/fmt:embedContent", json={})
    assert raw.json()["error"]["status"] == "NOT_FOUND"


def test_gemini_models_list_and_get(env: Env) -> None:
    """The SDK with a custom base URL asks `/v1/...`, whose GET `/v1/models` is OpenAI's list (H-G1);
    Gemini's listing is at `/v1beta/models`: a client lists with `api_version="v1beta"` (and generates)."""
    options = genai_types.HttpOptions(base_url=env.stack.url, api_version="v1beta", timeout=60_000)
    v1beta = genai.Client(api_key="unused", http_options=options)
    names = {m.name for m in v1beta.models.list()}
    assert {"models/bench/fmt", "models/bench/fmt:merged"} <= names
    one = v1beta.models.get(model="bench/fmt:merged")
    assert one.display_name == "bench/fmt:merged" and one.input_token_limit == 128_000
    assert env.sdk.http.get("/v1beta/models/bench%2Ffmt%3Amerged").json()["name"] == "models/bench/fmt:merged"
    missing = env.sdk.http.get("/v1beta/models/bench/nope")
    assert missing.status_code == 404 and missing.json()["error"]["status"] == "NOT_FOUND"
    done = v1beta.models.generate_content(model="bench/fmt", contents=PROMPT)
    assert done.text and done.text.startswith("Bench bench/fmt p")


# ---------------------------------------------------------------- refusals (X-1, X-3, A-41, H-G15)


def test_a41_legacy_functions_and_anthropic_server_tools_are_refused(env: Env) -> None:
    with pytest.raises(openai.BadRequestError) as legacy:
        env.sdk.openai.chat.completions.create(
            model="bench/fmt",
            messages=[{"role": "user", "content": PROMPT}],
            functions=[{"name": "lookup", "parameters": {"type": "object"}}],
        )
    assert "tools" in str(legacy.value)
    for model in ("bench/fmt", "bench/fmt:merged", "bench/fmt:route"):
        with pytest.raises(anthropic.BadRequestError) as caught:
            env.sdk.anthropic.messages.create(
                model=model,
                max_tokens=10,
                messages=[{"role": "user", "content": PROMPT}],
                tools=[{"type": "web_search_20250305", "name": "web_search"}],
            )
        assert caught.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
        assert "server tool" in str(caught.value)


def test_x1_tools_in_every_format_point_at_route_mode(env: Env) -> None:
    with pytest.raises(anthropic.BadRequestError) as caught:
        env.sdk.anthropic.messages.create(
            model="bench/fmt",
            max_tokens=10,
            messages=[{"role": "user", "content": PROMPT}],
            tools=[{"name": "lookup", "input_schema": {"type": "object"}}],
        )
    assert "bench/fmt:route" in str(caught.value)
    assert (
        env.sdk.anthropic.messages.create(
            model="bench/fmt",
            max_tokens=10,
            messages=[{"role": "user", "content": PROMPT}],
            tools=[],
        ).stop_reason
        == "end_turn"
    )
    responses = env.sdk.http.post(
        "/v1/responses",
        json={
            "model": "bench/fmt",
            "input": PROMPT,
            "tools": [{"type": "function", "name": "f", "parameters": {}}],
        },
    )
    assert responses.status_code == 400 and "route" in responses.json()["error"]["message"]
    gemini = env.sdk.http.post(
        "/v1beta/models/bench/fmt:generateContent",
        json={
            "contents": [{"parts": [{"text": PROMPT}]}],
            "tools": [{"functionDeclarations": [{"name": "f"}]}],
        },
    )
    assert gemini.status_code == 400 and gemini.json()["error"]["status"] == "INVALID_ARGUMENT"
    ollama_reply = env.sdk.http.post(
        "/api/chat",
        json={
            "model": "bench/fmt",
            "stream": False,
            "messages": [{"role": "user", "content": PROMPT}],
            "tools": [{"type": "function", "function": {"name": "f"}}],
        },
    )
    assert ollama_reply.status_code == 400 and "route" in ollama_reply.json()["error"]


def test_h1_each_format_refuses_in_its_own_shape(env: Env) -> None:
    http = env.sdk.http
    unknown: dict[str, Any] = {"model": "bench/no-such-collection"}
    chat = http.post("/v1/completions", json={**unknown, "prompt": "x"})
    assert chat.status_code == 404 and chat.json()["error"]["code"] == 404
    responses = http.post("/v1/responses", json={**unknown, "input": "x"})
    assert responses.json()["error"]["code"] == "404" and responses.json()["error"]["param"] is None
    messages = http.post(
        "/v1/messages", json={**unknown, "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}
    )
    assert messages.json()["type"] == "error" and messages.json()["error"]["type"] == "not_found_error"
    chat_o = http.post("/api/chat", json={**unknown, "messages": [{"role": "user", "content": "x"}]})
    assert chat_o.status_code == 404 and set(chat_o.json()) == {"error"}
    gemini = http.post("/v1beta/models/bench/no-such-collection:generateContent", json={"contents": []})
    assert gemini.status_code == 400 and gemini.json()["error"]["status"] == "INVALID_ARGUMENT"
    typed = http.post("/v1/messages", content=b"{}", headers={"content-type": "text/plain"})
    assert typed.status_code == 415 and typed.json()["type"] == "error"


def test_h_g15_unknown_routes_list_every_format(env: Env) -> None:
    get = env.sdk.http.get("/v1/nothing-here")
    assert get.status_code == 404
    listing = get.json()["error"]["message"]
    for route in (
        "GET /v1/models",
        "GET /models",
        "GET /api/tags",
        "GET /api/version",
        "GET /v1beta/models",
        "GET /v1beta/models/{model_id}",
    ):
        assert f"- {route}\n" in listing + "\n", route
    post = env.sdk.http.post("/v1/nothing-here", json={})
    listing = post.json()["error"]["message"]
    for route in (
        "/v1/chat/completions",
        "/chat/completions",
        "/v1/completions",
        "/completions",
        "/v1/responses",
        "/responses",
        "/v1/messages",
        "/v1/messages/count_tokens",
        "/api/chat",
        "/api/generate",
        "/api/show",
        "/v1beta/models/{target}",
        "/v1/models/{target}",
        "/bench/verdict",
    ):
        assert f"- POST {route}\n" in listing + "\n", route
