"""One adapter per API kind (C-3), all ending in the same `CallOutcome`, so a panel mixes them freely."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from services.caller import anthropic_messages, gemini_native, openai_chat, openai_responses
from services.caller.outcome import CallOutcome
from services.caller.wire import StreamParser, UpstreamRequest
from shared.commands import SeatCall


def no_fallback(request: UpstreamRequest, outcome: CallOutcome) -> UpstreamRequest | None:
    return None


@dataclass(frozen=True)
class Adapter:
    build: Callable[[SeatCall, str | None], UpstreamRequest]
    parser: Callable[[], StreamParser]
    parse_plain: Callable[[bytes], CallOutcome]
    # A request to send again after a refusal of our request's shape (U-2's streaming ladder), else None.
    fallback: Callable[[UpstreamRequest, CallOutcome], UpstreamRequest | None] = no_fallback


ADAPTERS: dict[str, Adapter] = {
    "chat": Adapter(openai_chat.build_request, openai_chat.StreamParser, openai_chat.parse_plain,
                    openai_chat.stream_fallback),
    "anthropic": Adapter(anthropic_messages.build_request, anthropic_messages.StreamParser,
                         anthropic_messages.parse_plain),
    "gemini": Adapter(gemini_native.build_request, gemini_native.StreamParser, gemini_native.parse_plain),
    "responses": Adapter(openai_responses.build_request, openai_responses.StreamParser,
                         openai_responses.parse_plain),
}
