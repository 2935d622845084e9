"""An agent-sized route turn for `make bench`: what a coding agent sends on every turn, not a one-line prompt.

A coding agent's request carries its system prompt, its tool list and the whole conversation so far: tens
to a hundred kilobytes, turn after turn. Every byte crosses the gateway, the bus and the caller, so this is
where a route turn's per-byte work shows; the bench's one-line route turn measures the fixed cost alone.
The body is built from a fixed seed: every run sends the same bytes.
"""

from __future__ import annotations

import json
import random
from typing import Any

AGENT_TOOLS = 20
AGENT_KB = 100
WORDS = ("the of and to in is that for it with as was on be by this are file test function return value "
         "error line change branch commit patch module import class method call read write run check").split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def agent_body(model: str, kilobytes: int = AGENT_KB, tools: int = AGENT_TOOLS) -> str:
    """An OpenAI chat request, streamed: a long system prompt, `tools` function tools with their schemas,
    and user and assistant turns until the body passes `kilobytes`. Each load worker's first message names
    it (`{worker}`, see `loadgen`), so each worker is one agent with a conversation of its own."""
    rng = random.Random(7)
    declared: list[dict[str, Any]] = [
        {"type": "function", "function": {
            "name": f"tool_{n}", "description": _text(rng, 60),
            "parameters": {"type": "object", "required": ["arg_0"], "properties": {
                f"arg_{k}": {"type": "string", "description": _text(rng, 12)} for k in range(6)}},
        }}
        for n in range(tools)
    ]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": _text(rng, 2000)},
        {"role": "user", "content": "Agent {worker}: " + _text(rng, 150)},
    ]
    body = {"model": model, "stream": True, "messages": messages, "tools": declared}
    while len(json.dumps(body)) < kilobytes * 1024:
        messages += [{"role": "assistant", "content": _text(rng, 200)},
                     {"role": "user", "content": _text(rng, 150)}]
    return json.dumps(body)
