"""Request rules every format shares: `model`, `with` and `bench` (H-2, X-3 "All"), image URLs (P-6)."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from services.gateway.ask import REPLY_MODES, ReplyMode
from shared.refusal import Refusal

IMAGE_URL_RE = re.compile(r"^(https?://[^/?#\s]+|data:image/[A-Za-z0-9.+-]+;base64,)", re.IGNORECASE)


def object_list(raw: Any, name: str, must: str, required: bool = True) -> list[dict[str, Any]]:
    """The turns a request asks about (messages, input items, contents): refused unless a list of objects,
    and, when `required`, unless there is at least one (else there is nothing to ask)."""
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise Refusal(400, f'"{name}" must be {must}')
    if required and not raw:
        raise Refusal(400, f'"{name}" is empty: there is nothing to ask')
    return raw


def model_field(body: dict[str, Any]) -> str:
    model = body.get("model", "")
    if model is None:
        return ""
    if not isinstance(model, str):
        raise Refusal(400, '"model" must be a string such as "bench/<collection>"')
    return model


def bench_fields(body: dict[str, Any]) -> tuple[list[str], ReplyMode | None]:
    """The `with` nominees and the `bench.reply` mode, accepted in every format's body."""
    nominees = body.get("with")
    if nominees is None:
        nominees = []
    if not isinstance(nominees, list) or not all(isinstance(a, str) for a in nominees):
        raise Refusal(400, '"with" must be a list of model aliases (strings)')
    bench = body.get("bench")
    if bench is None:
        return nominees, None
    if not isinstance(bench, dict):
        raise Refusal(400, '"bench" must be an object such as {"reply": "merged"}')
    reply = bench.get("reply")
    if reply is None:
        return nominees, None
    if reply not in REPLY_MODES:
        raise Refusal(400, f'"bench.reply" must be one of all, merged, route (got {json.dumps(reply)})')
    mode: ReplyMode = reply
    return nominees, mode


def url_kind(url: Any) -> str:
    """What a refused image URL is, without a byte of its data or its address (SEC-7)."""
    if not isinstance(url, str) or not url.strip():
        return "no URL"
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "data":
        media = url[5:].split(";", 1)[0].split(",", 1)[0][:40]
        return f"a data URL of type {json.dumps(media or 'none')} (base64 image data is needed)"
    if scheme in ("http", "https"):
        return "an http(s) URL without a host"
    if scheme.isalnum() and len(scheme) <= 20:
        return f"a {scheme}: URL"
    return "text that is not a URL"


def parses(url: str) -> bool:
    """Whether an http(s) URL has a host and port that can be read (`http://[x`, `http://h:port?` cannot)."""
    try:
        _ = urlsplit(url).port
    except ValueError:
        return False
    return True


def check_image_url(url: Any) -> None:
    """P-6: an image is an http(s) URL or a `data:image/<type>;base64,` URL; the gateway never fetches it."""
    if not isinstance(url, str) or not IMAGE_URL_RE.match(url):
        raise Refusal(
            400, f"an image must be an http(s) URL or a data:image/<type>;base64, URL (got {url_kind(url)})"
        )
    if not url[:5].lower().startswith("data:") and not parses(url):
        raise Refusal(400, "an image URL must be a valid http(s) URL (its host or port cannot be read)")


def sse(payload: Any) -> bytes:
    """One server-sent event carrying JSON."""
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"
