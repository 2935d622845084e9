"""A fake provider speaking every wire the callers use, run as its own process so tests and benchmarks
talk real HTTP.

    python -m tests.fakes.provider --port 8999 --models '{"m-a": {"latency_ms": 50}}'

OpenAI chat completions and Responses, and Anthropic Messages, under `/v1`; Gemini's native API under
`/v1beta` (`FakeProvider.base_for(api)`). Each served model has a behaviour (see
`tests.fakes.behaviour.BEHAVIOURS`); tests change it at run time over the admin routes under `/_fake/`
through `FakeProvider`. Provider requests are recorded in memory (the last 10 000), with lower-cased header
names and the served model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
import urllib.request
from pathlib import Path
from typing import Any

from aiohttp import web

from shared import runtime
from tests.fakes import anthropic_wire, gemini_wire, responses_wire
from tests.fakes.behaviour import (
    BEHAVIOURS,
    THINKING,
    TOOL_ARGUMENT_PIECES,
    TOOL_NAME,
    State,
    answer_for,
    estimate_tokens,
    event_stream,
    json_reply,
    rate_limit_message,
    reply_name,
    split_text,
    take_request,
    text_tokens,
)
from tests.fakes.loopback import LoopbackProcess, serve
from tests.fakes.route_tools import interleaved_tool_deltas


def last_user_text(messages: list[dict[str, Any]]) -> str:
    for msg in reversed(messages):
        if msg.get("role") == "user":
            content = msg.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def answer_text(model: str, cfg: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    return answer_for(model, cfg, last_user_text(messages))


def usage_of(messages: list[dict[str, Any]], answer: str, reasoning: int = 0) -> dict[str, Any]:
    prompt = estimate_tokens(json.dumps(messages))
    completion = text_tokens(answer) + reasoning
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}
    if reasoning:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return usage


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def rate_limit_reply(model: str, cfg: dict[str, Any]) -> web.Response:
    """OpenAI's 429: its error body and `x-ratelimit-*` headers (used by chat and Responses)."""
    retry_after = float(cfg["retry_after"])
    headers = {
        "retry-after": f"{retry_after:g}",
        "x-ratelimit-limit-requests": "30",
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": f"{retry_after:g}s",
    }
    body = error_body(rate_limit_message(model, retry_after), "requests", "rate_limit_exceeded")
    return json_reply(body, cfg, 429, **headers)


def failure_reply(
    model: str, cfg: dict[str, Any], request: web.Request, body: dict[str, Any]
) -> web.Response | None:
    """The reply for behaviours that fail before any answer (OpenAI's shapes); None when the model answers."""
    behaviour = cfg["behaviour"]
    if behaviour == "rate_limit":
        return rate_limit_reply(model, cfg)
    if behaviour == "error_500":
        return json_reply(error_body("The server had an error while processing your request.",
                                     "server_error"), cfg, 500)
    if behaviour == "echo_auth":
        seen = request.headers.get("Authorization", "")
        return json_reply(error_body(f"Incorrect API key provided: {seen}", "invalid_request_error",
                                     "invalid_api_key"), cfg, 401)
    if behaviour == "refuse_stream_options" and "stream_options" in body:
        return json_reply(error_body("stream_options is not supported", "invalid_request_error"), cfg, 400)
    if behaviour == "not_found":
        return json_reply(error_body(f"The model `{model}` does not exist or you do not have access to it.",
                                     "invalid_request_error", "model_not_found"), cfg, 404)
    if behaviour == "no_tools" and body.get("tools"):
        return json_reply(error_body("tools are not supported for this model", "invalid_request_error"),
                          cfg, 400)
    if behaviour == "redirect":
        return json_reply(error_body("moved", "redirect"), cfg, 307,
                          Location="http://127.0.0.1:9/v1/chat/completions")
    return None


def completion_id() -> str:
    return f"chatcmpl-fake{time.monotonic_ns():x}"


def tool_call_deltas() -> list[dict[str, Any]]:
    head = {"index": 0, "id": "call_fake1", "type": "function",
            "function": {"name": TOOL_NAME, "arguments": ""}}
    return [head] + [{"index": 0, "function": {"arguments": p}} for p in TOOL_ARGUMENT_PIECES]


def plain_reply(model: str, cfg: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    text = answer_text(model, cfg, messages)
    reasoning = THINKING if cfg["behaviour"] == "reasoning" else ""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    finish = "length" if cfg["behaviour"] == "empty_length" else "stop"
    if reasoning:
        message["reasoning_content"] = reasoning
    if cfg["behaviour"] == "tools":
        message["content"] = None
        arguments = "".join(TOOL_ARGUMENT_PIECES)
        message["tool_calls"] = [{"id": "call_fake1", "type": "function",
                                  "function": {"name": TOOL_NAME, "arguments": arguments}}]
        finish = "tool_calls"
    return {
        "id": completion_id(), "object": "chat.completion", "created": int(time.time()),
        "model": reply_name(model, cfg),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage_of(messages, text, 4 if reasoning else 0),
    }


class ChunkWriter:
    """Writes OpenAI `chat.completion.chunk` SSE frames for one streamed reply."""

    def __init__(self, resp: web.StreamResponse, model: str) -> None:
        self.resp, self.model, self.id, self.created = resp, model, completion_id(), int(time.time())

    async def frame(self, payload: dict[str, Any]) -> None:
        await self.resp.write(b"data: " + json.dumps(payload).encode() + b"\n\n")

    async def delta(self, delta: dict[str, Any], finish: str | None = None) -> None:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        await self.frame({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                          "model": self.model, "choices": [choice]})

    async def usage(self, usage: dict[str, Any]) -> None:
        await self.frame({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                          "model": self.model, "choices": [], "usage": usage})

    async def done(self) -> None:
        await self.resp.write(b"data: [DONE]\n\n")


async def stream_reply(
    request: web.Request, model: str, cfg: dict[str, Any], body: dict[str, Any]
) -> web.StreamResponse:
    messages = body.get("messages") or []
    resp = event_stream(cfg)
    await resp.prepare(request)
    out = ChunkWriter(resp, reply_name(model, cfg))
    behaviour = cfg["behaviour"]
    text = answer_text(model, cfg, messages)
    await out.delta({"role": "assistant", "content": ""})
    if behaviour == "reasoning":
        for piece in split_text(THINKING, 2):
            await out.delta({"reasoning_content": piece})
    if behaviour in ("midstream_error", "cut", "stall"):
        await out.delta({"content": text[: max(1, len(text) // 2)]})
        if behaviour == "stall":
            await asyncio.Event().wait()  # never another byte (until the client goes away)
        if behaviour == "midstream_error":
            await out.frame(error_body("The model crashed while generating", "server_error"))
        return resp
    for piece in split_text(text):
        await out.delta({"content": piece})
    finish = "stop"
    if behaviour == "tools":
        for call in tool_call_deltas():
            await out.delta({"tool_calls": [call]})
        finish = "tool_calls"
    elif behaviour == "parallel_tools":
        for call in interleaved_tool_deltas():
            await out.delta({"tool_calls": [call]})
        finish = "tool_calls"
    elif behaviour == "empty_length":
        finish = "length"
    await out.delta({}, finish)
    if (body.get("stream_options") or {}).get("include_usage"):
        await out.usage(usage_of(messages, text, 4 if behaviour == "reasoning" else 0))
    await out.done()
    return resp


async def chat_completions(request: web.Request) -> web.StreamResponse:
    body, model, cfg = await take_request(request)
    failed = failure_reply(model, cfg, request, body)
    if failed is not None:
        return failed
    if cfg["behaviour"] == "error_in_200":
        return json_reply(error_body("Upstream model failed to produce a response", "upstream_error"), cfg)
    if body.get("stream"):
        return await stream_reply(request, model, cfg, body)
    if cfg["behaviour"] in ("midstream_error", "cut"):
        return json_reply(error_body("The model crashed while generating", "server_error"), cfg)
    return json_reply(plain_reply(model, cfg, body.get("messages") or []), cfg)


async def list_models(request: web.Request) -> web.Response:
    """OpenAI's list (with one entry hidden by `visibility`, as some hubs do), or Anthropic's when asked
    with `anthropic-version`."""
    state: State = request.app["state"]
    state.record(request, "", {})
    if "anthropic-version" in request.headers:
        return anthropic_wire.list_models(request, list(state.models))
    data: list[dict[str, Any]] = [{"id": name, "object": "model", "created": 0, "owned_by": "fake"}
                                  for name, cfg in state.models.items() if cfg["behaviour"] != "unlisted"]
    data.append({"id": "fake-hidden", "object": "model", "created": 0, "owned_by": "fake",
                 "visibility": "hidden"})
    return web.json_response({"object": "list", "data": data})


async def admin_set_model(request: web.Request) -> web.Response:
    body = await request.json()
    try:
        request.app["state"].set_model(body.pop("model"), body)
    except (KeyError, ValueError) as exc:
        return web.json_response({"error": str(exc)}, status=400)
    return web.json_response({"ok": True})


async def admin_requests(request: web.Request) -> web.Response:
    return web.json_response(list(request.app["state"].log))


async def admin_reset_requests(request: web.Request) -> web.Response:
    request.app["state"].log.clear()
    return web.json_response({"ok": True})


async def admin_health(request: web.Request) -> web.Response:
    return web.json_response({"ok": True, "pid": os.getpid()})


def build_app(models: dict[str, dict[str, Any]]) -> web.Application:
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app["state"] = State(models)
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_get("/v1/models", list_models)
    app.router.add_post("/v1/messages", anthropic_wire.messages)
    app.router.add_post("/v1/responses", responses_wire.responses)
    app.router.add_post("/v1beta/models/{target}", gemini_wire.generate)
    app.router.add_get("/v1beta/models", gemini_wire.list_models)
    app.router.add_post("/_fake/models", admin_set_model)
    app.router.add_get("/_fake/requests", admin_requests)
    app.router.add_post("/_fake/requests/reset", admin_reset_requests)
    app.router.add_get("/_fake/health", admin_health)
    return app


async def run_server(port: int, models: dict[str, dict[str, Any]]) -> None:
    await serve(web.AppRunner(build_app(models), access_log=None, handler_cancellation=True), port,
                backlog=2048)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.provider",
        description="A fake provider (OpenAI chat and Responses, Anthropic, Gemini) for tests. "
                    f"Behaviours: {', '.join(BEHAVIOURS)}. Admin routes under /_fake/.",
    )
    parser.add_argument("--port", type=int, required=True, help="loopback port to listen on")
    parser.add_argument("--models", default="{}",
                        help='JSON: {"<served model>": {"behaviour": "ok", "latency_ms": 0, "answer": null, '
                             '"retry_after": 1, "times": null}}')
    args = parser.parse_args(argv)
    # A real provider answers a panel's concurrent requests in parallel; this one process comes closer to
    # that on the services' own event loop.
    runtime.run(run_server(args.port, json.loads(args.models)))


# ---------------------------------------------------------------- the test-side handle


class FakeProvider(LoopbackProcess):
    """Starts the fake provider as a subprocess on a free loopback port and controls it over HTTP."""

    module = "tests.fakes.provider"
    health_path = "/_fake/health"
    title = "fake provider"

    def __init__(self, models: dict[str, dict[str, Any]] | None = None, log_path: Path | None = None) -> None:
        super().__init__(log_path)
        self.models = models or {}

    def args(self) -> list[str]:
        return ["--models", json.dumps(self.models)]

    def base_for(self, api: str) -> str:
        """The endpoint base of each API kind (C-3): Gemini's native API lives under `/v1beta`."""
        return f"http://127.0.0.1:{self.port}/v1beta" if api == "gemini" else self.base_url

    def _admin(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        data = json.dumps(payload).encode() if payload is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def set_model(self, model: str, behaviour: str = "ok", latency_ms: int = 0, answer: str | None = None,
                  retry_after: float = 1, times: int | None = None, reply_model: str | None = None,
                  headers: dict[str, str] | None = None, answers: dict[str, str] | None = None) -> None:
        """Replace the model's settings. With `times`, the behaviour holds for N requests, then `ok`;
        `reply_model` makes replies name another model; `headers` are added to every reply; `answers` picks
        the answer by text the last user message holds (the first that matches)."""
        settings = {"model": model, "behaviour": behaviour, "latency_ms": latency_ms, "answer": answer,
                    "retry_after": retry_after, "times": times, "reply_model": reply_model,
                    "headers": headers or {}, "answers": answers or {}}
        self._admin("POST", "/_fake/models", settings)

    def requests(self) -> list[dict[str, Any]]:
        """Provider requests received (model lists too), oldest first: {"path", "query", "model",
        "headers" (lower-cased names), "body", "at"}."""
        result: list[dict[str, Any]] = self._admin("GET", "/_fake/requests")
        return result

    def reset_requests(self) -> None:
        self._admin("POST", "/_fake/requests/reset", {})


if __name__ == "__main__":
    main()
