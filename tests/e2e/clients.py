"""Every format's official SDK pointed at the stack, and readers for what the formats write on the wire (for
what an SDK hides: keep-alives, pings, the raw event order)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx
import ollama
import openai
from google import genai
from google.genai import types as genai_types

PANEL_RE = re.compile(r"p\d{8}-\d{6}-[0-9a-f]{4}")


@dataclass
class Clients:
    openai: openai.OpenAI
    anthropic: anthropic.Anthropic
    gemini: genai.Client
    ollama: ollama.Client
    http: httpx.Client


def clients(url: str) -> Clients:
    return Clients(
        openai=openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0, timeout=60),
        anthropic=anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0, timeout=60),
        gemini=genai.Client(
            api_key="unused", http_options=genai_types.HttpOptions(base_url=url, timeout=60_000)
        ),
        ollama=ollama.Client(host=url, timeout=60),
        http=httpx.Client(base_url=url, timeout=60),
    )


EMPTY_BODY = "_empty reply — usually a token budget, not incapacity_"


def section(seat: dict[str, Any]) -> str:
    """A seat's section as P-13 writes it, rebuilt from its `bench` seat object."""
    body = seat["answer"] or (f"_error: {seat['error'][:300]}_" if seat["error"] else EMPTY_BODY)
    status = f"`{seat['call']}` · {seat['status']} · {seat['seconds']:.1f}s"
    return f"## {seat['seat']} — {seat['alias']}\n{status}\n\n{body}\n"


def check_all_text(text: str, bench: dict[str, Any], collection: str) -> None:
    """S-4 / P-13: heading first, every seat's section (in whatever order they finished), the footer last."""
    assert text.startswith(f"Bench {collection} {bench['panel']} · "), text[:200]
    assert "\n---\nCheck each answer against the real work" in text
    for seat in bench["seats"]:
        assert section(seat) in text, (seat, text)


# ---------------------------------------------------------------- wire readers


def sse_frames(raw: str) -> list[tuple[str | None, Any]]:
    """(event name or None, data) per SSE frame; a comment frame is (":", its text); `[DONE]` stays a str."""
    frames: list[tuple[str | None, Any]] = []
    for block in raw.split("\n\n"):
        if not block:
            continue
        if block.startswith(":"):
            frames.append((":", block))
            continue
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data.append(line[len("data: ") :])
        text = "\n".join(data)
        frames.append((name, text if text == "[DONE]" else json.loads(text)))
    return frames


def ndjson(raw: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def json_array(raw: str) -> list[dict[str, Any]]:
    """Gemini without `alt=sse` (S-1): one JSON array written element by element."""
    assert raw.startswith("[") and raw.endswith("]"), raw[:100]
    elements: list[dict[str, Any]] = json.loads(raw)
    return elements


def gemini_text(chunk: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for c in chunk.get("candidates", []) for p in c["content"]["parts"])
