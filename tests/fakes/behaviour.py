"""What every fake wire format shares: each served model's behaviour, the answer it gives, the request log.

A behaviour is set per served model at run time (see `BEHAVIOURS`); a wire format that has no way to
express one (e.g. `blocked` outside Gemini) answers as `ok`.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any

from aiohttp import web

LOG_CAP = 10_000
BEHAVIOURS = (
    "ok",  # answer "<model> says: <first 60 chars of the last user message>" unless `answer` is set
    "rate_limit",  # 429 with retry-after, the wire's rate-limit headers and its error body
    "error_500",  # 500 with the wire's error body
    "hang",  # accept and never answer
    "empty",  # an empty answer that stopped normally
    "empty_length",  # an empty answer cut by the token limit
    "error_in_200",  # 200 whose body is an error (Responses: a streamed `response.failed`)
    "midstream_error",  # streams some text, then the wire's error event, then the stream ends
    "cut",  # streams some text, then the connection ends without the wire's end marker
    "stall",  # chat: streams some text, then never another byte
    "notice",  # a short reply that is really a provider notice
    "echo_auth",  # 401 whose error body echoes the Authorization header (a provider that leaks the key)
    "reasoning",  # reasoning before the answer, with reasoning tokens in usage where the wire reports them
    "tools",  # a tool call assembled from several argument pieces
    "parallel_tools",  # chat: two tool calls whose argument deltas interleave (tests.fakes.route_tools)
    "refuse_stream_options",  # chat: 400 "stream_options is not supported" when asked for them, else `ok`
    "redirect",  # 307 to another URL (a client must not follow it: it would carry the key)
    "blocked",  # Gemini: the prompt is blocked (promptFeedback.blockReason SAFETY)
    "not_found",  # chat: 404 "the model does not exist" (a model the provider stopped serving)
    "no_tools",  # chat: 400 when the request carries tools (tool calling broken), else `ok`
    "unlisted",  # answers as `ok` but is left out of the model list (gone from the endpoint's listing)
)
NOTICE = "You have run out of credits, upgrade your plan"
THINKING = "Thinking it over."
TOOL_NAME = "lookup"
TOOL_ARGUMENT_PIECES = ('{"q": ', '"weather', ' in Oslo"}')
DEFAULTS: dict[str, Any] = {
    "behaviour": "ok", "latency_ms": 0, "answer": None, "retry_after": 1, "times": None,
    "reply_model": None,  # the model the reply names (a silent swap) instead of the one asked for
    "headers": {},  # extra response headers on every reply (e.g. x-ratelimit-* quota headers)
    "answers": {},  # text in the last user message → the answer (the first that matches), before `answer`
}


class State:
    """Per-model settings and the request log, held by the server process."""

    def __init__(self, models: dict[str, dict[str, Any]]) -> None:
        self.models: dict[str, dict[str, Any]] = {}
        for name, cfg in models.items():
            self.set_model(name, cfg)
        self.log: deque[dict[str, Any]] = deque(maxlen=LOG_CAP)

    def set_model(self, name: str, cfg: dict[str, Any]) -> None:
        behaviour = cfg.get("behaviour", "ok")
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {behaviour!r}; one of {', '.join(BEHAVIOURS)}")
        self.models[name] = {**DEFAULTS, **{k: v for k, v in cfg.items() if v is not None}}

    def behaviour_for(self, name: str) -> dict[str, Any]:
        """The model's settings for this request; a `times`-limited behaviour reverts to `ok` when used up."""
        cfg = self.models.get(name)
        if cfg is None:
            return dict(DEFAULTS)
        current = dict(cfg)
        if cfg["times"] is not None:
            if cfg["times"] <= 0:
                current["behaviour"] = "ok"
            else:
                cfg["times"] -= 1
        return current

    def record(self, request: web.Request, model: str, body: dict[str, Any]) -> None:
        self.log.append({"path": request.path, "query": request.query_string, "model": model,
                         "at": time.time(), "body": body,
                         "headers": {k.lower(): v for k, v in request.headers.items()}})


async def take_request(
    request: web.Request, model: str | None = None
) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """Read, log and delay one provider request: (body, served model, its settings for this request)."""
    state: State = request.app["state"]
    try:
        body = await request.json()
    except ValueError:
        body = {}
    served = model if model is not None else str(body.get("model", ""))
    state.record(request, served, body)
    cfg = state.behaviour_for(served)
    if cfg["latency_ms"]:
        await asyncio.sleep(cfg["latency_ms"] / 1000)
    if cfg["behaviour"] == "hang":
        await asyncio.sleep(24 * 3600)
    return body, served, cfg


def answer_for(model: str, cfg: dict[str, Any], user_text: str) -> str:
    if cfg["behaviour"] in ("empty", "empty_length", "tools"):
        return ""
    if cfg["behaviour"] == "parallel_tools" and cfg["answer"] is None:  # text before the calls when set
        return ""
    if cfg["behaviour"] == "notice":
        return NOTICE
    for said, answer in (cfg["answers"] or {}).items():
        if said in user_text:
            return str(answer)
    if cfg["answer"] is not None:
        return str(cfg["answer"])
    return f"{model} says: {user_text[:60]}"


def reply_name(model: str, cfg: dict[str, Any]) -> str:
    return str(cfg["reply_model"] or model)


def split_text(text: str, pieces: int = 3) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


def estimate_tokens(value: Any) -> int:
    return max(1, len(str(value)) // 4)


def text_tokens(text: str) -> int:
    return len(text) // 4 + (1 if text else 0)


def rate_limit_message(model: str, retry_after: float) -> str:
    return (f"Rate limit reached for {model} in organization org-fake on requests per min (RPM): "
            f"Limit 30, Used 30, Requested 1. Please try again in {retry_after:g}s.")


def event_stream(cfg: dict[str, Any]) -> web.StreamResponse:
    return web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                       **cfg["headers"]})


def json_reply(body: Any, cfg: dict[str, Any], status: int = 200, **headers: str) -> web.Response:
    return web.json_response(body, status=status, headers={**cfg["headers"], **headers})
