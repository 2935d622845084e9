"""What a Stop hook may read of an agent's transcript (MCP-3 `pending_verdicts`): only a `.jsonl` file (the
name as given and the file it resolves to), only its last 8 MiB, and only the panel call ids in it. Used by
the gateway (HTTP) and by `bench mcp` (stdio, on the agent's machine)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

TAIL_BYTES = 8 * 1024 * 1024
SUFFIX = ".jsonl"
# C-12 ids with a seat: `p<8 digits>-<6 digits>-<4 hex>.<seat><n?>`, e.g. p20260101-120000-ab12.member1. No
# boundary before the `p`: in JSON text an id may follow an escaped newline (`\\np2026…`).
CALL_ID = re.compile(r"p\d{8}-\d{6}-[0-9a-f]{4}\.[a-z]+\d*\b")


def call_ids(text: str) -> list[str]:
    """Every call id in the text, once each, in order of first mention."""
    return list(dict.fromkeys(CALL_ID.findall(text)))


def readable(path: str) -> Path | None:
    """The transcript's real file when the hook may read it: a `.jsonl` name that resolves to a regular
    `.jsonl` file (a link to anything else is refused); None otherwise."""
    if not path or "\x00" in path or not path.endswith(SUFFIX):
        return None
    try:
        real = Path(os.path.realpath(path))
        mode = real.stat().st_mode
    except (OSError, ValueError):
        return None
    return real if stat.S_ISREG(mode) and real.name.endswith(SUFFIX) else None


def transcript_calls(path: str) -> list[str]:
    """The call ids in the last 8 MiB of a transcript the hook may read; [] for any other path."""
    real = readable(path)
    if real is None:
        return []
    try:
        with real.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - TAIL_BYTES))
            tail = handle.read(TAIL_BYTES)
    except OSError:
        return []
    return call_ids(tail.decode("utf-8", errors="replace"))
