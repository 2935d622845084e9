"""A key's sliding 60 s window of requests (SEC-4), as a pure function over the stamps of the last minute.

The window lives in a KV entry shared by every gateway replica; `take` says what to write back (with
compare-and-set) or how long to wait.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

WINDOW_MS = 60_000


@dataclass(frozen=True)
class Taken:
    stamps: list[int]  # what the window holds after this request, oldest first (epoch ms)
    retry_after: int | None  # seconds until a slot frees (1..61) when the cap is reached, else None


def live(stamps: list[int], now_ms: int) -> list[int]:
    return sorted(t for t in stamps if now_ms - WINDOW_MS < t <= now_ms + WINDOW_MS)


def take(stamps: list[int], rpm: int, now_ms: int) -> Taken:
    window = live(stamps, now_ms)
    if len(window) >= rpm:
        frees_at = window[len(window) - rpm] + WINDOW_MS
        wait = math.ceil((frees_at - now_ms) / 1000)
        return Taken(window, min(61, max(1, wait)))
    return Taken([*window, now_ms], None)


def decode(raw: bytes | None) -> list[int]:
    if not raw:
        return []
    try:
        data = json.loads(raw)
    except ValueError:
        return []
    return [int(t) for t in data if isinstance(t, int)] if isinstance(data, list) else []


def encode(stamps: list[int]) -> bytes:
    return json.dumps(stamps, separators=(",", ":")).encode()
