"""The rules of `pending_verdicts` (MCP-3), without I/O: when a Stop hook gets nothing, which call ids it
asks about, where a (session, seat) reminder is remembered, and the hook output that carries the reminder.

The memory itself is a KV bucket shared by every gateway replica (`memory.py`): a session is reminded of
a seat once, whichever replica its hook reaches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shared.transcripts import CALL_ID

MAX_CALLS = 500  # the latest seats a hook asks about: the ledger question stays small


@dataclass(frozen=True)
class PendingArgs:
    session: str
    transcript: str
    calls: list[str] | None  # given by `bench mcp`, which read the transcript on the agent's machine


def is_active(value: Any) -> bool:
    """The hook's `stop_hook_active`: Claude Code sends a boolean, the anchor's hook the text "true"."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def pending_args(args: Mapping[str, Any]) -> PendingArgs | None:
    """None when the hook gets empty text: already active, no session, or nothing to read."""
    session, transcript, calls = args.get("session"), args.get("transcript"), args.get("calls")
    if is_active(args.get("active")) or not isinstance(session, str) or not session.strip():
        return None
    if isinstance(calls, list):
        ids = [c for c in calls if isinstance(c, str) and CALL_ID.fullmatch(c)]
        return PendingArgs(session, "", latest(ids))
    if isinstance(transcript, str) and transcript:
        return PendingArgs(session, transcript, None)
    return None


def latest(calls: Sequence[str]) -> list[str]:
    """Each call once, at most the last MAX_CALLS mentioned."""
    return list(dict.fromkeys(calls))[-MAX_CALLS:]


def session_token(session: str) -> str:
    """A session id as a KV key token: hashed, so any text is safe and none is stored."""
    return hashlib.sha256(session.encode()).hexdigest()[:32]


def reminder_key(session: str, call: str) -> str:
    """`<session hash>.<call id>`; call ids hold only KV-safe characters (letters, digits, `-`, `.`)."""
    return f"{session_token(session)}.{call}"


def reminder_output(calls: Sequence[str]) -> str:
    """The Stop hook's output naming the seats still owed a verdict; "" when there are none."""
    if not calls:
        return ""
    context = (
        f"Benchwarmers: {len(calls)} seat(s) you were given have no verdict yet: {', '.join(calls)}. "
        "Check each answer against the real work, then send one `verdict` per seat (useful or not, with the "
        "claims you found real or false)."
    )
    return json.dumps({"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": context}})
