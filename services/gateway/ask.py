"""The canonical request every API format translates into, and the refusal every step may raise.

A format's only job on the way in is to turn its body into an `Ask`: OpenAI chat messages (the bus's
`Msg` shape), the flattened system and prompt text (P-10), and the fields every format shares (`with`,
`bench.reply`, streaming). Everything after that (resolution, the panel, the reply text) sees only the Ask.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from services.gateway.panel.flatten import estimate_tokens, flatten

ReplyMode = Literal["all", "merged", "route"]
REPLY_MODES: tuple[ReplyMode, ...] = ("all", "merged", "route")


class Refusal(Exception):
    """A request the gateway will not serve, with the HTTP status and the message the client reads."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Ask:
    format: str  # the API format the request came in (its module's `name`)
    model: str  # the model string as asked, e.g. `bench/core:merged`
    messages: list[dict[str, Any]]  # OpenAI chat messages; image parts are `image_url` parts
    system: str  # P-10: every system/developer text, joined by a blank line; images as placeholders
    prompt: str  # P-10: the non-system turns; images as placeholders
    images: int  # how many image parts the messages carry
    with_: list[str] = field(default_factory=list)
    reply: ReplyMode | None = None  # the body's `bench.reply`, which beats every other source
    stream: bool = False
    agentic: str = ""  # why the request is an agent's turn (tools, tool calls/results); "" when it is not

    @property
    def estimate(self) -> int:
        """P-5: the token estimate of the flattened text plus 2,500 per image."""
        return estimate_tokens(self.system, self.prompt, self.images)


def make_ask(
    format: str,
    model: str,
    messages: list[dict[str, Any]],
    *,
    with_: list[str] | None = None,
    reply: ReplyMode | None = None,
    stream: bool = False,
    agentic: str = "",
) -> Ask:
    """Build an Ask from canonical messages, flattening them once (P-10)."""
    flat = flatten(messages)
    return Ask(
        format=format, model=model, messages=messages, system=flat.system, prompt=flat.prompt,
        images=flat.images, with_=list(with_ or []), reply=reply, stream=stream, agentic=agentic,
    )
