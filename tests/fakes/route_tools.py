"""Parallel tool calls whose argument deltas interleave, as agents' upstreams send them (route mode, A-52).

The `parallel_tools` behaviour streams `PARALLEL_CALLS` this way: each call opened (index, id, name), then
their argument pieces alternating between the calls, so only a client that assembles by `index` gets both
calls whole.
"""

from __future__ import annotations

from typing import Any

PARALLEL_CALLS = (
    ("call_read", "read_file", '{"path": "src/main.py", "lines": [1, 40]}'),
    ("call_list", "list_dir", '{"dir": "tests"}'),
)
PIECES = 3


def pieces(arguments: str, count: int = PIECES) -> list[str]:
    return [arguments[k * len(arguments) // count : (k + 1) * len(arguments) // count] for k in range(count)]


def interleaved_tool_deltas() -> list[dict[str, Any]]:
    """The `tool_calls` delta entries in the order they are streamed, one per chunk."""
    out: list[dict[str, Any]] = [
        {"index": i, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        for i, (call_id, name, _) in enumerate(PARALLEL_CALLS)
    ]
    split = [pieces(arguments) for _, _, arguments in PARALLEL_CALLS]
    for k in range(PIECES):
        out += [{"index": i, "function": {"arguments": split[i][k]}} for i in range(len(PARALLEL_CALLS))]
    return out
