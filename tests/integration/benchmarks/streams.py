"""Reading a streamed chat reply as the benchmarks' yardsticks hand it back."""

from __future__ import annotations

import json


def streamed_text(reply: str) -> str:
    """The text of one streamed chat reply, which must end with `[DONE]`."""
    lines = [line[5:].strip() for line in reply.splitlines() if line.startswith("data:")]
    assert lines[-1] == "[DONE]"
    chunks = [json.loads(line) for line in lines[:-1]]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices"))
