"""Reading what the format encoders write: SSE events, NDJSON lines, a whole stream from pieces."""

from __future__ import annotations

import json
from typing import Any

from services.gateway.ask import Ask
from services.gateway.formats.base import Answer, Format, StreamEncoder

PANEL = "p20260102-030405-ab12"
BENCH: dict[str, Any] = {
    "panel": PANEL,
    "collection": "bench/core",
    "seats": [
        {
            "call": f"{PANEL}.member1",
            "seat": "member",
            "alias": "m1",
            "status": "ok",
            "seconds": 1.2,
            "answer": "Rayleigh scattering.",
            "error": "",
        },
        {
            "call": f"{PANEL}.explorer",
            "seat": "explorer",
            "alias": "m9",
            "status": "error",
            "seconds": 0.4,
            "answer": "",
            "error": "HTTP 500",
        },
    ],
    "verdict": "POST /bench/verdict …",
}
PIECES = ["Bench bench/core heading\n", "\n## member — m1\nRayleigh.\n", "\n---\nfooter"]


def answer(content: str = "".join(PIECES), bench: dict[str, Any] | None = None) -> Answer:
    return Answer(collection="bench/core", content=content, bench=BENCH if bench is None else bench)


def whole_stream(fmt: Format, ask: Ask, pieces: list[str] = PIECES, keepalive: bool = False) -> bytes:
    """start, an optional keep-alive (as after a grace 200), the pieces, then finish with BENCH."""
    encoder = fmt.encoder(ask, "bench/core")
    out = encoder.start() + (encoder.keepalive() if keepalive else b"")
    return out + b"".join(encoder.piece(p) for p in pieces) + encoder.finish(BENCH)


def failed_stream(encoder: StreamEncoder, status: int, message: str) -> bytes:
    return encoder.start() + encoder.piece("Bench heading\n") + encoder.error(status, message)


def sse_events(raw: bytes) -> list[tuple[str | None, Any]]:
    """(event name or None, parsed data; the raw string for `[DONE]`) per event; comments are skipped."""
    events: list[tuple[str | None, Any]] = []
    for block in raw.decode().split("\n\n"):
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data.append(line[len("data: ") :])
        if data:
            text = "\n".join(data)
            events.append((name, text if text == "[DONE]" else json.loads(text)))
    return events


def comments(raw: bytes) -> list[str]:
    return [line for line in raw.decode().split("\n") if line.startswith(":")]


def ndjson(raw: bytes) -> list[dict[str, Any]]:
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.decode().splitlines()]
