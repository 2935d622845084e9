"""Each format against its official SDK, in process: the SDK's own requests parse into the expected Ask, and
the SDK reads our replies, streams and error bodies. An `httpx.MockTransport` stands in for the routes
(no sockets), doing what the route wiring does: path/query → params, parse, reply or encode."""

from __future__ import annotations

import base64
import json
from typing import Any

import anthropic
import httpx
import httpx2
import ollama
import openai
import pytest
from google import genai
from google.genai import types as genai_types

from services.gateway.ask import Ask
from services.gateway.formats.anthropic import Anthropic
from services.gateway.formats.base import Format
from services.gateway.formats.completions import Completions
from services.gateway.formats.gemini import Gemini
from services.gateway.formats.ollama import OllamaChat, OllamaGenerate
from services.gateway.formats.responses import Responses
from shared.refusal import Refusal
from tests.unit.gateway.formats.streams import BENCH, PANEL, PIECES, answer, whole_stream

BASE = "http://gateway.test"
TEXT = "".join(PIECES)
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 2  # URL-safe base64 of this has '-' and '_'


class Gateway:
    """The routes, reduced to what a format needs: which format and params for a request."""

    def __init__(self) -> None:
        self.asks: list[Ask] = []

    def route(self, request: Any) -> tuple[Format, dict[str, str]]:
        path = request.url.path
        table: dict[str, Format] = {
            "/v1/completions": Completions(),
            "/v1/responses": Responses(),
            "/v1/messages": Anthropic(),
            "/api/chat": OllamaChat(),
            "/api/generate": OllamaGenerate(),
        }
        if path in table:
            return table[path], {}
        prefix = next(
            p for p in ("/v1beta/models/", "/v1/models/") if path.startswith(p)
        )  # both are Gemini's
        return Gemini(), {"target": path[len(prefix) :], **dict(request.url.params)}

    def answer(self, request: Any) -> tuple[int, bytes, dict[str, str]]:
        """(status, body, headers) for an `httpx` or `httpx2` request (the anthropic SDK uses `httpx2`)."""
        fmt, params = self.route(request)
        try:
            ask = fmt.parse(json.loads(request.content), params)
        except Refusal as refusal:
            error = json.dumps(fmt.error_body(refusal.status, refusal.message)).encode()
            return refusal.status, error, {"content-type": "application/json"}
        self.asks.append(ask)
        if ask.stream:
            media_type = fmt.encoder(ask, "bench/core").media_type
            return 200, whole_stream(fmt, ask, keepalive=True), {"content-type": media_type}
        reply = fmt.reply(ask, answer())
        return 200, json.dumps(reply.body).encode(), {"content-type": "application/json", **reply.headers}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        status, content, headers = self.answer(request)
        return httpx.Response(status, content=content, headers=headers)

    def httpx2(self, request: httpx2.Request) -> httpx2.Response:
        status, content, headers = self.answer(request)
        return httpx2.Response(status, content=content, headers=headers)


@pytest.fixture
def gateway() -> Gateway:
    return Gateway()


def http(gateway: Gateway) -> httpx.Client:
    return httpx.Client(transport=httpx.MockTransport(gateway))


def http2(gateway: Gateway) -> httpx2.Client:
    """The openai and anthropic SDKs take an `httpx2` client."""
    return httpx2.Client(transport=httpx2.MockTransport(gateway.httpx2))


def test_openai_completions(gateway: Gateway) -> None:
    client = openai.OpenAI(base_url=f"{BASE}/v1", api_key="k", max_retries=0, http_client=http2(gateway))
    done = client.completions.create(model="bench/core", prompt="Why?", max_tokens=5)
    assert done.choices[0].text == TEXT and done.model_extra and done.model_extra["bench"] == BENCH
    chunks = list(client.completions.create(model="bench/core", prompt="Why?", stream=True))
    assert "".join(c.choices[0].text for c in chunks) == TEXT
    assert chunks[-1].choices[0].finish_reason == "stop"
    with pytest.raises(openai.BadRequestError) as caught:
        client.completions.create(model="bench/core", prompt=["a", "b"])
    assert "one string" in caught.value.message


def test_openai_responses(gateway: Gateway) -> None:
    client = openai.OpenAI(base_url=f"{BASE}/v1", api_key="k", max_retries=0, http_client=http2(gateway))
    image = "data:image/png;base64," + base64.b64encode(PNG).decode()
    items: Any = [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is this?"},
                {"type": "input_image", "image_url": image, "detail": "auto"},
            ],
        }
    ]
    done = client.responses.create(model="bench/core", instructions="Be brief.", input=items)
    assert done.output_text == TEXT and done.status == "completed"
    assert gateway.asks[-1].images == 1 and gateway.asks[-1].system == "Be brief."
    events = list(client.responses.create(model="bench/core", input="Why?", stream=True))
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[-1].type == "response.completed" and events[-1].response.output_text == TEXT
    with client.responses.stream(model="bench/core", input="Why?") as stream:
        final = stream.get_final_response()
    assert final.output_text == TEXT
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="bench/core", input="Why?", previous_response_id="resp_1")
    assert "previous_response_id" in caught.value.message


def test_anthropic_messages(gateway: Gateway) -> None:
    client = anthropic.Anthropic(base_url=BASE, api_key="k", max_retries=0, http_client=http2(gateway))
    image = {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()}
    content: Any = [{"type": "text", "text": "What is this?"}, {"type": "image", "source": image}]
    done = client.messages.create(
        model="bench/core",
        max_tokens=100,
        system="Be brief.",
        messages=[{"role": "user", "content": content}],
    )
    assert done.content[0].type == "text" and done.content[0].text == TEXT
    assert done.stop_reason == "end_turn" and done.model_extra and done.model_extra["bench"] == BENCH
    assert gateway.asks[-1].images == 1
    with client.messages.stream(
        model="bench/core", max_tokens=100, messages=[{"role": "user", "content": "Why?"}]
    ) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert streamed == TEXT and final.content[0].type == "text" and final.content[0].text == TEXT
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(
            model="bench/core",
            max_tokens=10,
            messages=[{"role": "user", "content": "x"}],
            tools=[{"type": "web_search_20250305", "name": "web_search"}],
        )
    assert "server tool" in str(caught.value)
    assert caught.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]


def test_ollama_chat_and_generate(gateway: Gateway) -> None:
    client = ollama.Client(host=BASE, transport=httpx.MockTransport(gateway))
    done = client.chat(
        model="bench/core:latest",
        stream=False,
        messages=[{"role": "user", "content": "What is this?", "images": [PNG]}],
    )
    assert done.message.content == TEXT and done.done and (done.total_duration or 0) > 0
    assert gateway.asks[-1].model == "bench/core" and gateway.asks[-1].images == 1
    url = gateway.asks[-1].messages[0]["content"][1]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(PNG).decode()
    lines = list(client.chat(model="bench/core", messages=[{"role": "user", "content": "Why?"}], stream=True))
    assert "".join(line.message.content or "" for line in lines) == TEXT and lines[-1].done
    generated = client.generate(model="bench/core", prompt="Why?", stream=False)
    assert generated.response == TEXT
    with pytest.raises(ollama.ResponseError) as caught:
        client.generate(model="bench/core", prompt="Why?", context=[1, 2], stream=False)
    assert caught.value.status_code == 400 and "/api/chat" in caught.value.error


def gemini_client(gateway: Gateway) -> genai.Client:
    options = genai_types.HttpOptions(base_url=BASE, httpx_client=http(gateway))
    return genai.Client(api_key="k", http_options=options)


def test_gemini_generate_content(gateway: Gateway) -> None:
    client = gemini_client(gateway)
    done = client.models.generate_content(
        model="bench/core",
        contents=["What is this?", genai_types.Part.from_bytes(data=PNG, mime_type="image/png")],
        config=genai_types.GenerateContentConfig(system_instruction="Be brief.", temperature=0.1),
    )
    assert done.text == TEXT
    ask = gateway.asks[-1]
    assert (ask.model, ask.system, ask.images) == ("bench/core", "Be brief.", 1)
    url = ask.messages[1]["content"][1]["image_url"]["url"]
    assert url == "data:image/png;base64," + base64.b64encode(PNG).decode()  # the standard alphabet
    assert done.sdk_http_response and done.sdk_http_response.headers
    assert done.sdk_http_response.headers["x-bench-panel"] == PANEL
    chunks = list(client.models.generate_content_stream(model="bench/core", contents="Why?"))
    assert "".join(c.text or "" for c in chunks) == TEXT
    with pytest.raises(genai.errors.ClientError) as caught:
        client.models.generate_content(
            model="bench/core",
            contents="Hi",
            config=genai_types.GenerateContentConfig(
                tools=[genai_types.Tool(google_search=genai_types.GoogleSearch())]
            ),
        )
    assert caught.value.code == 400 and "only Google can run" in str(caught.value)


def test_gemini_unknown_method_through_the_sdk(gateway: Gateway) -> None:
    with pytest.raises(genai.errors.ClientError) as caught:
        gemini_client(gateway).models.embed_content(model="bench/core", contents="Hi")
    assert caught.value.code == 404 and "generateContent" in str(caught.value)
