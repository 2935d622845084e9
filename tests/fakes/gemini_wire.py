"""The fake's Gemini wire (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`, `GET /v1beta/models`):
whole GenerateContentResponse objects per `data:` line, usageMetadata, promptFeedback blocks, and
google.rpc error objects (QuotaFailure and RetryInfo on a 429)."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from tests.fakes.behaviour import (
    THINKING,
    TOOL_ARGUMENT_PIECES,
    TOOL_NAME,
    answer_for,
    estimate_tokens,
    event_stream,
    json_reply,
    reply_name,
    split_text,
    take_request,
    text_tokens,
)

EMBEDDING_MODEL = "text-embedding-004"


def error_body(
    code: int, status: str, message: str, details: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = details
    return {"error": error}


def last_user_text(contents: list[dict[str, Any]]) -> str:
    for content in reversed(contents):
        if content.get("role", "user") == "user":
            texts = [p["text"] for p in content.get("parts") or [] if isinstance(p.get("text"), str)]
            if texts:
                return " ".join(texts)
    return ""


def rate_limited(model: str, cfg: dict[str, Any]) -> web.Response:
    wait = float(cfg["retry_after"])
    details: list[dict[str, Any]] = [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
            "quotaDimensions": {"location": "global", "model": model}, "quotaValue": "10"}]},
        {"@type": "type.googleapis.com/google.rpc.Help",
         "links": [{"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/"}]},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{wait:g}s"},
    ]
    message = ("You exceeded your current quota, please check your plan and billing details. "
               "Quota exceeded for metric: "
               "generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, "
               f"model: {model}\nPlease retry in {wait:g}s.")
    return json_reply(error_body(429, "RESOURCE_EXHAUSTED", message, details), cfg, 429)


def failure(model: str, cfg: dict[str, Any]) -> web.Response | None:
    behaviour = cfg["behaviour"]
    if behaviour == "rate_limit":
        return rate_limited(model, cfg)
    if behaviour == "error_500":
        return json_reply(error_body(500, "INTERNAL", "An internal error has occurred."), cfg, 500)
    if behaviour == "error_in_200":
        return json_reply(error_body(503, "UNAVAILABLE", "The model is overloaded."), cfg)
    return None


def usage(prompt: int, text: str, thoughts: int) -> dict[str, Any]:
    meta = {"promptTokenCount": prompt, "candidatesTokenCount": text_tokens(text),
            "totalTokenCount": prompt + text_tokens(text) + thoughts, "cachedContentTokenCount": 2}
    if thoughts:
        meta["thoughtsTokenCount"] = thoughts
    return meta


def chunk(model: str, parts: list[dict[str, Any]], meta: dict[str, Any], finish: str | None = None) -> bytes:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    payload = {"candidates": [candidate], "usageMetadata": meta, "modelVersion": model, "responseId": "fake"}
    return f"data: {json.dumps(payload)}\r\n\r\n".encode()


async def generate(request: web.Request) -> web.StreamResponse:
    target = request.match_info["target"]
    model, _, method = target.partition(":")
    body, model, cfg = await take_request(request, model)
    failed = failure(model, cfg)
    if failed is not None:
        return failed
    behaviour, named = cfg["behaviour"], reply_name(model, cfg)
    text = answer_for(model, cfg, last_user_text(body.get("contents") or []))
    prompt = estimate_tokens(json.dumps(body.get("contents")))
    thoughts = 4 if behaviour == "reasoning" else 0
    meta = usage(prompt, text, thoughts)
    if method != "streamGenerateContent" or request.query.get("alt") != "sse":
        return json_reply({"error": {"code": 400, "message": "the fake streams with alt=sse only",
                                     "status": "INVALID_ARGUMENT"}}, cfg, 400)
    resp = event_stream(cfg)
    await resp.prepare(request)
    if behaviour == "blocked":
        feedback = {"blockReason": "SAFETY", "safetyRatings": [
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH"}]}
        payload = {"promptFeedback": feedback, "usageMetadata": {"promptTokenCount": prompt},
                   "modelVersion": named}
        await resp.write(f"data: {json.dumps(payload)}\r\n\r\n".encode())
        return resp
    if behaviour == "reasoning":
        await resp.write(chunk(named, [{"text": THINKING, "thought": True}], {"promptTokenCount": prompt}))
    pieces = split_text(text)
    if behaviour in ("midstream_error", "cut"):
        await resp.write(chunk(named, [{"text": pieces[0]}], {"promptTokenCount": prompt}))
        if behaviour == "midstream_error":
            error = error_body(500, "INTERNAL", "An internal error has occurred mid-stream.")
            await resp.write(f"data: {json.dumps(error)}\r\n\r\n".encode())
        return resp
    for piece in pieces[:-1]:
        await resp.write(chunk(named, [{"text": piece}], {"promptTokenCount": prompt}))
    last: list[dict[str, Any]] = [{"text": pieces[-1]}] if pieces else []
    if behaviour == "tools":
        args = json.loads("".join(TOOL_ARGUMENT_PIECES))
        last = [{"functionCall": {"name": TOOL_NAME, "args": args}}]
    finish = "MAX_TOKENS" if behaviour == "empty_length" else "STOP"
    await resp.write(chunk(named, last or [{"text": ""}], meta, finish))
    return resp


async def list_models(request: web.Request) -> web.Response:
    """Every model the fake knows, plus an embedding model that cannot generateContent."""
    request.app["state"].record(request, "", {})
    names = list(request.app["state"].models)
    models = [{"name": f"models/{n}", "displayName": n.upper(), "inputTokenLimit": 1048576,
               "outputTokenLimit": 8192, "supportedGenerationMethods": ["generateContent", "countTokens"]}
              for n in names]
    models.append({"name": f"models/{EMBEDDING_MODEL}", "displayName": "Embedding", "inputTokenLimit": 2048,
                   "outputTokenLimit": 1, "supportedGenerationMethods": ["embedContent"]})
    return web.json_response({"models": models})
