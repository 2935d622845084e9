"""Malformed and oversized bodies at every generation route and the count/show/verdict routes, against a
whole stack (H-1, H-2, X-*, P-5): never a 5xx, every refusal in the route's own error shape, and nothing
recorded for it (the event stream holds as many events after the request as before).

Bodies start from a valid request of the route's format and have one to three parts replaced, removed or
added; some are not JSON objects at all. Their model is no collection, so a body the format accepts is
refused at resolution (404) rather than run; oversized prompts go to a collection whose only member has a
10-token window, which the seater refuses (413) before seating anyone."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from cli.stack import Stack
from shared import subjects
from tests.e2e.conftest import Admin, admin_bus, logs_on_failure

UNKNOWN = "bench/fuzz-nope"
TINY = "bench/fuzz-tiny"
PNG_B64 = "iVBORw0KGgo="
ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    404: "not_found_error",
    413: "request_too_large",
    415: "api_error",
}
GEMINI_STATUSES = {
    400: "INVALID_ARGUMENT",
    404: "NOT_FOUND",
    413: "INVALID_ARGUMENT",
    415: "INVALID_ARGUMENT",
}


def openai_error(status: int, body: Any) -> bool:
    return body == {
        "error": {"message": body["error"]["message"], "type": "bench_gateway", "code": status}
    } and isinstance(body["error"]["message"], str)


def responses_error(status: int, body: Any) -> bool:
    error = body.get("error") if isinstance(body, dict) else None
    return (
        isinstance(error, dict)
        and set(body) == {"error"}
        and isinstance(error.get("message"), str)
        and error.get("type") == "invalid_request_error"
        and "param" in error
        and error["param"] is None
        and error.get("code") == str(status)
    )


def anthropic_error(status: int, body: Any) -> bool:
    return (
        isinstance(body, dict)
        and body.get("type") == "error"
        and set(body) == {"type", "error"}
        and body["error"].get("type") == ANTHROPIC_TYPES[status]
        and isinstance(body["error"].get("message"), str)
    )


def ollama_error(status: int, body: Any) -> bool:
    return isinstance(body, dict) and set(body) == {"error"} and isinstance(body["error"], str)


def gemini_error(status: int, body: Any) -> bool:
    error = body.get("error") if isinstance(body, dict) else None
    return (
        isinstance(error, dict)
        and set(body) == {"error"}
        and error.get("code") == status
        and error.get("status") == GEMINI_STATUSES[status]
        and isinstance(error.get("message"), str)
    )


@dataclass(frozen=True)
class Route:
    path: str
    shape: Callable[[int, Any], bool]
    template: dict[str, Any]
    answers: Callable[[Any], bool] | None = None  # what a 200 may look like (routes that never run a panel)
    oversized: Callable[[str], dict[str, Any]] | None = None  # a request of `TINY` carrying this prompt


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


GEMINI_BODY: dict[str, Any] = {
    "contents": [
        {
            "role": "user",
            "parts": [{"text": "hi"}, {"inlineData": {"mimeType": "image/png", "data": PNG_B64}}],
        }
    ],
    "systemInstruction": {"parts": [{"text": "be brief"}]},
    "generationConfig": {"temperature": 0.2, "maxOutputTokens": 9},
}
ANTHROPIC_BODY: dict[str, Any] = {
    "model": UNKNOWN,
    "max_tokens": 5,
    "system": "be brief",
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
            ],
        }
    ],
}


def gemini_tiny(prompt: str) -> dict[str, Any]:
    return {"contents": [{"parts": [{"text": prompt}]}]}


ROUTES = [
    Route(
        "/v1/chat/completions",
        openai_error,
        {
            "model": UNKNOWN,
            "stream": False,
            "temperature": 0.1,
            "bench": {"reply": "all"},
            "with": ["x"],
            "messages": [
                {"role": "system", "content": "be brief"},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "hi"},
                        {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
                    ],
                },
            ],
        },
        oversized=lambda p: {"model": TINY, "messages": user(p)},
    ),
    Route(
        "/v1/completions",
        openai_error,
        {"model": UNKNOWN, "prompt": "hi", "max_tokens": 3},
        oversized=lambda p: {"model": TINY, "prompt": p, "stream": True},
    ),
    Route(
        "/v1/responses",
        responses_error,
        {
            "model": UNKNOWN,
            "instructions": "be brief",
            "input": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "hi"},
                        {"type": "input_image", "image_url": "https://x.test/a.png"},
                    ],
                },
                {"type": "function_call_output", "call_id": "c1", "output": "42"},
            ],
        },
        oversized=lambda p: {"model": TINY, "input": p},
    ),
    Route(
        "/v1/messages",
        anthropic_error,
        ANTHROPIC_BODY,
        oversized=lambda p: {"model": TINY, "max_tokens": 5, "messages": user(p), "stream": True},
    ),
    Route(
        "/api/chat",
        ollama_error,
        {
            "model": UNKNOWN + ":latest",
            "options": {"temperature": 0.1},
            "messages": [{"role": "user", "content": "hi", "images": [PNG_B64]}],
        },
        oversized=lambda p: {"model": TINY, "messages": user(p)},
    ),
    Route(
        "/api/generate",
        ollama_error,
        {"model": UNKNOWN, "prompt": "hi", "system": "s", "stream": False},
        oversized=lambda p: {"model": TINY, "prompt": p},
    ),
    Route(f"/v1beta/models/{UNKNOWN}:generateContent", gemini_error, GEMINI_BODY, oversized=gemini_tiny),
    Route(f"/v1/models/{UNKNOWN}:streamGenerateContent?alt=sse", gemini_error, GEMINI_BODY),
    Route(
        "/v1/messages/count_tokens",
        anthropic_error,
        ANTHROPIC_BODY,
        answers=lambda b: set(b) == {"input_tokens"} and isinstance(b["input_tokens"], int),
    ),
    Route(
        f"/v1beta/models/{UNKNOWN}:countTokens",
        gemini_error,
        {"generateContentRequest": GEMINI_BODY},
        answers=lambda b: set(b) == {"totalTokens"} and isinstance(b["totalTokens"], int),
    ),
    Route("/api/show", ollama_error, {"model": UNKNOWN}, answers=lambda b: "modelfile" in b),
    Route(
        "/bench/verdict",
        openai_error,
        {
            "call": "p20200101-000000-0000.member1",
            "useful": True,
            "note": "n",
            "real": ["a"],
            "false": [],
        },
    ),
]
TINY_ROUTES = [route for route in ROUTES if route.oversized is not None]

# Values and keys the formats read, so mutations land on what matters as well as on noise.
KEYS = st.sampled_from(
    [
        "model",
        "messages",
        "content",
        "role",
        "type",
        "text",
        "image_url",
        "url",
        "source",
        "data",
        "media_type",
        "tools",
        "tool_calls",
        "tool_call_id",
        "stream",
        "bench",
        "reply",
        "with",
        "prompt",
        "input",
        "images",
        "parts",
        "inlineData",
        "fileData",
        "mimeType",
        "fileUri",
        "functionCall",
        "functionResponse",
        "name",
        "contents",
        "system",
        "instructions",
        "options",
        "format",
        "context",
        "tool_use_id",
        "id",
        "call",
        "useful",
        "real",
        "false",
        "note",
        "previous_response_id",
        "functions",
        "systemInstruction",
    ]
) | st.text(max_size=8)
STRINGS = st.sampled_from(
    [
        "user",
        "assistant",
        "system",
        "developer",
        "tool",
        "function",
        "model",
        "text",
        "image",
        "image_url",
        "input_image",
        "input_text",
        "tool_use",
        "tool_result",
        "function_call",
        "base64",
        "url",
        "merged",
        "route",
        "all",
        "both",
        "data:image/png;base64,AAAA",
        "data:text/plain;base64,AAAA",
        "file:///etc/passwd",
        "https://x.test/y.png",
        "ftp://x/y",
        "",
        UNKNOWN,
        "bench/",
        ":latest",
        PNG_B64,
        "web_search_20250305",
    ]
) | st.text(max_size=30)
LEAVES = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | STRINGS
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


def paths(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at]
    if isinstance(node, dict):
        for key, child in node.items():
            found += paths(child, (*at, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            found += paths(child, (*at, index))
    return found


def at_path(body: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        body = body[step]
    return body


@st.composite
def mutated(draw: st.DrawFn, template: dict[str, Any]) -> Any:
    """The template with one to three parts replaced by other JSON, removed, or given a neighbour."""
    body: Any = copy.deepcopy(template)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths(body)))
        action = draw(st.sampled_from(["replace", "remove", "add"]))
        if not path:
            body = draw(VALUES) if action == "replace" else body
            continue
        parent = at_path(body, path[:-1])
        if action == "replace":
            parent[path[-1]] = draw(VALUES)
        elif action == "remove":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(KEYS)] = draw(VALUES)
        else:
            parent.insert(path[-1], draw(VALUES))
    return body


class EventCount:
    """The event stream's last sequence (it grows with every event stored), read on one connection kept for
    the module."""

    def __init__(self, stack: Stack) -> None:
        self.loop = asyncio.new_event_loop()
        self.nc = self.loop.run_until_complete(admin_bus(stack))

    def __call__(self) -> int:
        info = self.loop.run_until_complete(self.nc.jetstream().stream_info(subjects.EVENTS_STREAM))
        return int(info.state.last_seq)

    def written(self, after: int) -> list[str]:
        """The events stored after sequence `after`, less the late seats and call log lines of panels seated
        by then: the stack is shared, and an earlier test's panel (a seat that hung to its deadline) may
        still be ending. What is left is what a request wrote, as `<subject> <type>`."""
        js = self.nc.jetstream()
        found = []
        for seq in range(after + 1, self() + 1):
            msg = self.loop.run_until_complete(js.get_msg(subjects.EVENTS_STREAM, seq))
            if not self._of_an_earlier_panel(msg.subject, after):
                found.append(f"{msg.subject} {json.loads(msg.data or b'{}').get('type')}")
        return found

    def _of_an_earlier_panel(self, subject: str, after: int) -> bool:
        tokens = subject.split(".")
        if f"{tokens[0]}.{tokens[1]}.{tokens[2]}" not in (subjects.PANEL_PREFIX, subjects.SEAT_PREFIX):
            return False
        seated = self.loop.run_until_complete(self.nc.jetstream().get_msg(
            subjects.EVENTS_STREAM, 1, subject=subjects.panel_subject(tokens[3]), next=True))
        return (seated.seq or 0) <= after

    def close(self) -> None:
        self.loop.run_until_complete(self.nc.close())
        self.loop.close()


@dataclass
class Env:
    http: httpx.Client
    count: EventCount
    collections: set[str]


@pytest.fixture(scope="module")
def env(stack: Stack) -> Iterator[Env]:
    assert stack.nats_url
    admin = Admin(stack.url)
    admin.model("fuzz-tiny-m", ad_hoc=True, context_window=10)
    admin.collection("fuzz-tiny", ["fuzz-tiny-m"])
    count = EventCount(stack)
    try:
        with logs_on_failure(stack.home), httpx.Client(base_url=stack.url, timeout=60) as http:
            names = {
                row["id"].split(":")[0].removeprefix("bench/")
                for row in http.get("/v1/models").json()["data"]
            }
            yield Env(http, count, names)
    finally:
        count.close()


def names_a_collection(env: Env, body: Any) -> bool:
    """A mutation that happens to name a real collection would run a panel: not what this test is about."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return False
    name = body["model"].strip().removeprefix("bench/").split(":")[0]
    return name in env.collections


def check(env: Env, route: Route, content: bytes, content_type: str = "application/json") -> httpx.Response:
    before = env.count()
    reply = env.http.post(route.path, content=content, headers={"content-type": content_type})
    assert reply.status_code < 500, (route.path, content[:300], reply.text[:300])
    body = reply.json()
    if reply.status_code >= 400:
        assert route.shape(reply.status_code, body), (route.path, reply.status_code, body)
    else:
        assert route.answers is not None and route.answers(body), (route.path, content[:300], body)
    assert env.count.written(before) == [], (route.path, content[:300], reply.status_code)
    return reply


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)


@pytest.mark.parametrize("route", ROUTES, ids=[r.path for r in ROUTES])
@FUZZ
@given(data=st.data())
def test_malformed_bodies_are_refused_in_the_routes_shape_and_record_nothing(
    env: Env, route: Route, data: st.DataObject
) -> None:
    body = data.draw(mutated(route.template) | VALUES, label="body")
    assume(not names_a_collection(env, body))
    check(env, route, json.dumps(body).encode())


@pytest.mark.parametrize("route", ROUTES, ids=[r.path for r in ROUTES])
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    raw=st.binary(max_size=300)
    | st.sampled_from(
        [b"", b"[", b"NaN", b'{"a": Infinity}', b"[" * 5000, b'{"model": "\\ud800"}', b"{" * 70 + b"}" * 70]
    )
)
def test_bytes_that_are_no_json_object_are_400(env: Env, route: Route, raw: bytes) -> None:
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):
        parsed = None
    assume(not isinstance(parsed, dict))
    assert check(env, route, raw).status_code == 400


@pytest.mark.parametrize("route", TINY_ROUTES, ids=[r.path for r in TINY_ROUTES])
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(prompt=st.text(min_size=60, max_size=3000))
def test_prompts_too_large_for_every_member_are_413_and_seat_nobody(
    env: Env, route: Route, prompt: str
) -> None:
    assert route.oversized is not None
    path = route.path.replace(UNKNOWN, TINY)
    assert (
        check(env, Route(path, route.shape, {}), json.dumps(route.oversized(prompt)).encode()).status_code
        == 413
    )


@pytest.mark.parametrize("route", ROUTES, ids=[r.path for r in ROUTES])
def test_a_body_over_the_limit_and_a_wrong_content_type_are_refused_before_reading(
    env: Env, route: Route
) -> None:
    big = check(env, route, b'{"model": "' + b"x" * 20_000_001 + b'"}')
    assert big.status_code == 413 and "the limit is 20,000,000" in big.text
    if route.path not in ("/bench/verdict", "/api/show"):  # routes that carry images say how to send them
        assert "http(s) URLs" in big.text
    assert check(env, route, b"{}", content_type="text/plain").status_code == 415
