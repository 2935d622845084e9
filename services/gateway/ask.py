"""The canonical request every API format translates into.

A format's only job on the way in is to turn its body into an `Ask`: OpenAI chat messages (the bus's
`Msg` shape), the flattened system and prompt text (P-10), and the fields every format shares (`with`,
`bench.reply`, streaming), plus what a reply or route mode needs from the request as sent (the model as
written, the OpenAI fields route mode passes on, the Responses tools' names and what was left out, when it
arrived, Gemini's stream form). Everything after that (resolution, the panel, the reply text) sees only the
Ask.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from services.gateway.panel.flatten import estimate_tokens, flatten

ReplyMode = Literal["all", "merged", "route"]
REPLY_MODES: tuple[ReplyMode, ...] = ("all", "merged", "route")


@dataclass(frozen=True)
class Ask:
    format: str  # the API format the request came in (its module's `name`)
    model: str  # the model string to resolve, e.g. `bench/core:merged` (Ollama's `:latest` already gone)
    messages: list[dict[str, Any]]  # OpenAI chat messages; image parts are `image_url` parts
    system: str  # P-10: every system/developer text, joined by a blank line; images as placeholders
    prompt: str  # P-10: the non-system turns; images as placeholders
    images: int  # how many image parts the messages carry
    with_: list[str] = field(default_factory=list)
    reply: ReplyMode | None = None  # the body's `bench.reply`, which beats every other source
    stream: bool = False
    agentic: str = ""  # why the request is an agent's turn (tools, tool calls/results); "" when it is not
    asked_model: str = ""  # the model exactly as the client wrote it; most formats echo it (H-G3..H-G9)
    route_fields: dict[str, Any] = field(default_factory=dict)  # RM-5: tools, tool_choice… as OpenAI
    custom_tools: frozenset[str] = frozenset()  # Responses custom tools: their calls go back as custom calls
    # Responses namespace members, offered under flattened names: flat name → (namespace, name) for the calls
    namespaced_tools: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    dropped_tools: tuple[str, ...] = ()  # hosted tool types not offered to a member (X-2, route mode)
    dropped_items: tuple[str, ...] = ()  # input items of hosted tools left out of what a member reads
    received_ns: int = field(default_factory=time.monotonic_ns)  # Ollama reports real durations (H-G7)
    event_stream: bool = True  # False: Gemini without `alt=sse` streams one JSON array instead (S-1)
    caller: str = "local"  # who asked: the gateway key's name, or `local` (SEC-3); set after the guard

    @property
    def estimate(self) -> int:
        """P-5: the token estimate of the flattened text plus 2,500 per image."""
        return estimate_tokens(self.system, self.prompt, self.images)


def make_ask(
    format: str,
    model: str,
    messages: list[dict[str, Any]],
    *,
    asked_model: str | None = None,
    with_: list[str] | None = None,
    reply: ReplyMode | None = None,
    stream: bool = False,
    agentic: str = "",
    route_fields: dict[str, Any] | None = None,
    event_stream: bool = True,
) -> Ask:
    """Build an Ask from canonical messages, flattening them once (P-10)."""
    flat = flatten(messages)
    return Ask(
        format=format, model=model, messages=messages, system=flat.system, prompt=flat.prompt,
        images=flat.images, with_=list(with_ or []), reply=reply, stream=stream, agentic=agentic,
        asked_model=model if asked_model is None else asked_model, route_fields=dict(route_fields or {}),
        event_stream=event_stream,
    )
