"""Sticky conversations (RM-4): the key that recognises an agent's next turn, the record kept under it, and
the order of members a turn walks.

An agent resends its whole conversation every turn, so the key is what stays put: the collection, the
caller, every system/developer text and the first user message. A side request with its own system prompt
(a sub-agent, a title) is another conversation; the request's format is not part of the key. The record is
stored as JSON bytes (a KV bucket shared by every gateway replica, idle entries dropped after an hour), so
the next turn finds its model whichever replica it lands on.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from services.gateway.panel.flatten import SYSTEM_ROLES, message_text
from shared.ids import CONVERSATION_RE, digest

IDLE_TTL_S = 3600  # an entry idle longer is forgotten: the next turn is a new conversation
KEY_HEX = 24
LOCAL_CALLER = "local"


def canonical_collection(collection: str) -> str:
    """`core` or `bench/core` → `bench/core`."""
    return "bench/" + collection.removeprefix("bench/")


def system_text(messages: Sequence[dict[str, Any]]) -> str:
    """Every system/developer text, joined by a blank line (images as placeholders)."""
    return "\n\n".join(
        message_text(m.get("content"))[0] for m in messages if m.get("role") in SYSTEM_ROLES
    )


def first_user_text(messages: Sequence[dict[str, Any]]) -> str:
    """The first user message's text ("" when there is none)."""
    first = next((m for m in messages if m.get("role") == "user"), None)
    return message_text(first.get("content"))[0] if first else ""


def conversation_key(collection: str, caller: str, messages: Sequence[dict[str, Any]]) -> str:
    """RM-4: the first 24 hex of SHA-256 over the collection, the caller (gateway key name or `local`), the
    system/developer text and the first user message. Hex only, so it is a valid KV key as it is."""
    return digest(
        canonical_collection(collection), caller or LOCAL_CALLER, system_text(messages),
        first_user_text(messages), size=KEY_HEX,
    )


class Conversation(BaseModel):
    """One conversation's record. Replaced, never edited in place: `after_turn` gives the next version."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=CONVERSATION_RE.pattern)  # r<YYYYMMDD>-<HHMMSS>-<4 hex>, reserved like panel ids
    key: str
    collection: str  # bench/<c>
    caller: str = LOCAL_CALLER
    model: str = ""  # the alias that answered the last turn ("" until one has)
    order: list[str] = Field(default_factory=list)  # the members as the last turn walked them
    turns: int = 0
    answered: list[str] = Field(default_factory=list)  # aliases in the order each first answered
    created: datetime
    last_used: datetime

    def to_json(self) -> bytes:
        return self.model_dump_json().encode()

    @classmethod
    def from_json(cls, data: bytes) -> Conversation:
        return cls.model_validate_json(data)

    @property
    def next_turn(self) -> int:
        return self.turns + 1

    def offload_number(self, alias: str) -> int | None:
        """The alias's place among the models that answered this conversation, from 1 (None if it has not)."""
        return self.answered.index(alias) + 1 if alias in self.answered else None

    def call_for(self, alias: str) -> str:
        """C-12: `<conv>.<n>`, n = the alias's index among the models that answered + 1. An alias that has not
        answered yet gets the number it will have when it does."""
        number = self.offload_number(alias) or len(self.answered) + 1
        return f"{self.id}.{number}"

    def lapsed(self, now: datetime, idle_s: float = IDLE_TTL_S) -> bool:
        return now - self.last_used > timedelta(seconds=idle_s)

    def after_turn(self, alias: str, order: Sequence[str], now: datetime) -> Conversation:
        """The record after one turn: `alias` answered ("" when every member failed) and becomes the
        conversation's model; `order` is the order the turn walked."""
        answered = [*self.answered, alias] if alias and alias not in self.answered else list(self.answered)
        return self.model_copy(update={
            "model": alias or self.model, "order": list(order), "turns": self.turns + 1, "answered": answered,
            "last_used": now,
        })


def new_conversation(
    conversation_id: str, key: str, collection: str, caller: str, now: datetime
) -> Conversation:
    return Conversation(
        id=conversation_id, key=key, collection=canonical_collection(collection),
        caller=caller or LOCAL_CALLER, created=now, last_used=now,
    )


def live(conversation: Conversation | None, now: datetime) -> Conversation | None:
    """The conversation unless it lapsed (an idle entry is dropped on the next lookup)."""
    return None if conversation is None or conversation.lapsed(now) else conversation
