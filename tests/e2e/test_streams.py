"""Streaming in every format against a whole stack (S-1..S-5, A-26..A-28): the 200 before a slow seat
answers, keep-alives in each format's own form while it thinks, sections in finish order, `bench` last.

The stack writes a keep-alive after 0.5 s of silence (BENCH_KEEPALIVE_S in the session fixture); the slow
seat takes 2 s, so each stream must show the heading, then keep-alives, then the slow seat's section. The
formats are asked at once, each on its own connection."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from cli.stack import Stack
from tests.e2e.clients import check_all_text, gemini_text, json_array, ndjson, sse_frames
from tests.e2e.conftest import Admin, logs_on_failure
from tests.fakes.provider import FakeProvider

SLOW_S = 2.0
SLOW_ANSWER = "the slow seat has thought it through"
QUICK_ANSWER = "the quick seat answers at once"
KEEPALIVE = "keep-alive"

# Each format's stream read as a sequence of ("text", piece) / (KEEPALIVE, "") / ("bench", bench) steps.
Steps = list[tuple[str, Any]]


def openai_steps(raw: str) -> Steps:
    steps: Steps = []
    for name, data in sse_frames(raw):
        if name == ":":
            steps.append((KEEPALIVE, ""))
        elif isinstance(data, dict):
            choice = data["choices"][0]
            text = choice.get("text") if "text" in choice else choice["delta"].get("content")
            steps.append(("text", text or ""))
            if "bench" in data:
                steps.append(("bench", data["bench"]))
    return steps


def responses_steps(raw: str) -> Steps:
    steps: Steps = []
    for name, data in sse_frames(raw):
        if name == ":":
            steps.append((KEEPALIVE, ""))
        elif name == "response.output_text.delta":
            steps.append(("text", data["delta"]))
        elif name == "response.completed":
            steps.append(("bench", data["response"]["bench"]))
    return steps


def anthropic_steps(raw: str) -> Steps:
    steps: Steps = []
    for name, data in sse_frames(raw):
        if name == "ping":
            steps.append((KEEPALIVE, ""))
        elif name == "content_block_delta":
            steps.append(("text", data["delta"]["text"]))
        elif name == "message_delta":
            steps.append(("bench", data["bench"]))
    return steps


def ollama_steps(raw: str) -> Steps:
    """`/api/chat` answers in `message.content`, `/api/generate` in `response`; empty lines keep alive."""
    steps: Steps = []
    for line in ndjson(raw):
        text = line["message"]["content"] if "message" in line else line["response"]
        steps.append(("text", text) if text or line["done"] else (KEEPALIVE, ""))
        if line["done"]:
            steps.append(("bench", line["bench"]))
    return steps


def gemini_chunks_steps(chunks: list[dict[str, Any]]) -> Steps:
    steps: Steps = []
    for chunk in chunks:
        text = gemini_text(chunk)
        last = chunk["candidates"][0].get("finishReason") == "STOP"
        steps.append(("text", text) if text or last else (KEEPALIVE, ""))
    return steps


@dataclass(frozen=True)
class Format:
    name: str
    path: str
    body: Callable[[str], dict[str, Any]]
    media_type: str
    steps: Callable[[str], Steps]


def messages(model: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"think slowly, {model}"}]


FORMATS = [
    Format(
        "openai chat",
        "/v1/chat/completions",
        lambda m: {"model": m, "stream": True, "messages": messages(m)},
        "text/event-stream",
        openai_steps,
    ),
    Format(
        "completions",
        "/v1/completions",
        lambda m: {"model": m, "stream": True, "prompt": "think slowly"},
        "text/event-stream",
        openai_steps,
    ),
    Format(
        "responses",
        "/v1/responses",
        lambda m: {"model": m, "stream": True, "input": "think slowly"},
        "text/event-stream",
        responses_steps,
    ),
    Format(
        "anthropic",
        "/v1/messages",
        lambda m: {"model": m, "stream": True, "max_tokens": 9, "messages": messages(m)},
        "text/event-stream",
        anthropic_steps,
    ),
    Format(
        "ollama chat",
        "/api/chat",
        lambda m: {"model": m, "messages": messages(m)},
        "application/x-ndjson",
        ollama_steps,
    ),
    Format(
        "ollama generate",
        "/api/generate",
        lambda m: {"model": m, "prompt": "think slowly"},
        "application/x-ndjson",
        ollama_steps,
    ),
    Format(
        "gemini sse",
        "/v1beta/models/{model}:streamGenerateContent?alt=sse",
        lambda m: {"contents": [{"parts": [{"text": "think slowly"}]}]},
        "text/event-stream",
        lambda raw: gemini_chunks_steps([d for _, d in sse_frames(raw)]),
    ),
    Format(
        "gemini array",
        "/v1beta/models/{model}:streamGenerateContent",
        lambda m: {"contents": [{"parts": [{"text": "think slowly"}]}]},
        "application/json",
        lambda raw: gemini_chunks_steps(json_array(raw)),
    ),
]


@pytest.fixture(scope="module")
def url(stack: Stack, provider: FakeProvider) -> Iterator[str]:
    provider.set_model("slug-slow", latency_ms=int(SLOW_S * 1000), answer=SLOW_ANSWER)
    provider.set_model("slug-quick", answer=QUICK_ANSWER)
    with logs_on_failure(stack.home):
        admin = Admin(stack.url)
        admin.model("slug-slow", ad_hoc=True)
        admin.model("slug-quick", ad_hoc=True)
        admin.collection("slug", ["slug-slow", "slug-quick"], merger="slug-quick")
        yield stack.url


@dataclass(frozen=True)
class Streamed:
    status: int
    media_type: str
    headers_after_s: float
    raw: str


def stream(url: str, fmt: Format, model: str) -> Streamed:
    started = time.monotonic()
    with httpx.Client(base_url=url, timeout=60) as http:
        with http.stream("POST", fmt.path.format(model=model), json=fmt.body(model)) as reply:
            headers_after = time.monotonic() - started
            raw = reply.read().decode()
    return Streamed(reply.status_code, reply.headers["content-type"], headers_after, raw)


def all_formats(url: str, model: str) -> dict[str, Streamed]:
    with ThreadPoolExecutor(len(FORMATS)) as pool:
        futures = {fmt.name: pool.submit(stream, url, fmt, model) for fmt in FORMATS}
        return {name: future.result() for name, future in futures.items()}


def test_a26_a27_a28_every_format_streams_at_once_keeps_alive_and_sections_in_finish_order(url: str) -> None:
    results = all_formats(url, "bench/slug")
    for fmt in FORMATS:
        got = results[fmt.name]
        assert got.status == 200 and got.media_type.startswith(fmt.media_type), (fmt.name, got.raw[:300])
        assert got.headers_after_s < SLOW_S, fmt.name  # the 200 did not wait for the slow seat
        steps = fmt.steps(got.raw)
        kinds = [kind for kind, _ in steps]
        texts = [(i, text) for i, (kind, text) in enumerate(steps) if kind == "text" and text]
        heading_at, heading = texts[0]
        assert heading.startswith("Bench bench/slug p"), (fmt.name, heading)
        slow_at = next(i for i, text in texts if SLOW_ANSWER in text)
        quick_at = next(i for i, text in texts if QUICK_ANSWER in text)
        assert heading_at < quick_at < slow_at, fmt.name  # finish order, the slow member1 last
        assert KEEPALIVE in kinds[quick_at:slow_at], (fmt.name, kinds)  # the format's own keep-alive
        assert KEEPALIVE not in kinds[slow_at:], fmt.name
        text = "".join(text for _, text in texts)
        if "bench" in kinds:
            bench = steps[kinds.index("bench")][1]
            assert kinds[-1] == "bench" and bench["seats"][0]["answer"] == SLOW_ANSWER
            check_all_text(text, bench, "bench/slug")
        else:  # S-5: Gemini streams carry no bench
            assert fmt.name.startswith("gemini") and text.startswith("Bench bench/slug")


def test_s4_a_merged_stream_keeps_alive_then_writes_everything_at_once(url: str) -> None:
    results = all_formats(url, "bench/slug:merged")
    for fmt in FORMATS:
        got = results[fmt.name]
        assert got.status == 200, (fmt.name, got.raw[:300])
        steps = fmt.steps(got.raw)
        texts = [(i, text) for i, (kind, text) in enumerate(steps) if kind == "text" and text]
        assert len(texts) == 1, (fmt.name, texts)
        at, merged = texts[0]
        assert merged.startswith("slug-quick") or merged.startswith(QUICK_ANSWER), (fmt.name, merged[:80])
        assert "\n---\nMerged by slug-quick (`" in merged
        assert [kind for kind, _ in steps[:at]].count(KEEPALIVE) >= 2, (
            fmt.name
        )  # S-3 while nothing is written
