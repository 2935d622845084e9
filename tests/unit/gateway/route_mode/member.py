"""Member streams as an OpenAI-compatible upstream sends them, and a turn driven through the route domain
the way the transport drives it: chunks through a `MemberStream` into an encoder, then `finish`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from services.gateway.formats.route_encoder import RouteEncoder
from services.gateway.route_mode.assemble import Chunk, MemberStream, TurnSummary
from services.gateway.route_mode.bench import route_bench
from services.gateway.route_mode.conversation import Conversation, new_conversation

UPSTREAM_ID = "chatcmpl-upstream-1"
CREATED = 1_700_000_000
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
CONV = "r20260102-030405-ab12"
USAGE = {
    "prompt_tokens": 321,
    "completion_tokens": 45,
    "total_tokens": 366,
    "completion_tokens_details": {"reasoning_tokens": 7},
}


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> Chunk:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": UPSTREAM_ID,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": "org/m-a",
        "choices": choices,
        **extra,
    }


def usage_chunk(usage: dict[str, Any] = USAGE) -> Chunk:
    return chunk(None, usage=usage)


def text_stream(
    pieces: Sequence[str], finish: str = "stop", usage: bool = True, reasoning: Sequence[str] = ()
) -> list[Chunk]:
    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"reasoning_content": r}) for r in reasoning]
    out += [chunk({"content": p}) for p in pieces]
    out.append(chunk({}, finish))
    return out + ([usage_chunk()] if usage else [])


def call_start(index: int, call_id: str, name: str) -> dict[str, Any]:
    return {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}


def call_args(index: int, piece: str) -> dict[str, Any]:
    return {"index": index, "function": {"arguments": piece}}


# Two parallel calls whose argument deltas interleave: starts, then alternating pieces.
READ = ("call_read", "read_file", '{"path": "src/main.py", "lines": [1, 40]}')
LIST = ("call_list", "list_dir", '{"dir": "tests"}')


def interleaved_calls(text: str = "", calls: Sequence[tuple[str, str, str]] = (READ, LIST)) -> list[Chunk]:
    """A reply with optional leading text, then the calls' deltas interleaved three pieces each."""
    out = [chunk({"role": "assistant", "content": None})]
    if text:
        out.append(chunk({"content": text}))
    out += [chunk({"tool_calls": [call_start(i, cid, name)]}) for i, (cid, name, _) in enumerate(calls)]
    thirds = [[args[k * len(args) // 3 : (k + 1) * len(args) // 3] for k in range(3)] for _, _, args in calls]
    for k in range(3):
        for i in range(len(calls)):
            out.append(chunk({"tool_calls": [call_args(i, thirds[i][k])]}))
    out.append(chunk({}, "tool_calls"))
    return [*out, usage_chunk()]


def conversation(collection: str = "bench/core") -> Conversation:
    return new_conversation(CONV, "k" * 24, collection, "local", NOW).after_turn("m-a", ["m-a", "m-b"], NOW)


def bench_for(conv: Conversation | None = None) -> dict[str, Any]:
    conv = conv or conversation()
    return route_bench(conv, "m-a", conv.turns)


def drive(
    encoder: RouteEncoder,
    chunks: Sequence[Chunk],
    bench: dict[str, Any] | None = None,
    keepalive: bool = False,
    finish: bool = True,
) -> tuple[bytes, TurnSummary]:
    """start (+ a keep-alive, as after a grace 200), each chunk the MemberStream passes on, then finish
    (unless the member broke off: then the caller writes the error)."""
    stream = MemberStream()
    out = encoder.start() + (encoder.keepalive() if keepalive else b"")
    for raw in chunks:
        for passed in stream.feed(raw):
            out += encoder.chunk(passed)
    for passed in stream.release():
        out += encoder.chunk(passed)
    summary = stream.summary()
    if not finish:
        return out, summary
    return out + encoder.finish(summary, bench if bench is not None else bench_for()), summary


def summarise(chunks: Sequence[Chunk]) -> TurnSummary:
    stream = MemberStream()
    for raw in chunks:
        stream.feed(raw)
    return stream.summary()
