"""A streamed reply's lines, whatever its chunks' boundaries: mid-line, between `\\r` and `\\n`, inside a
multi-byte character, or a last line with no newline."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from services.caller.upstream import sse_lines


async def lines_of(*chunks: bytes) -> list[str]:
    async def body() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    resp = httpx.Response(200, content=body())
    return [line async for line in sse_lines(resp)]


async def test_lines_are_whole_whatever_the_chunks() -> None:
    text = 'data: {"a": "héllo"}\n\ndata: [DONE]\n'.encode()
    whole = await lines_of(text)
    assert whole == ['data: {"a": "héllo"}', "", "data: [DONE]"]
    for cut in range(1, len(text)):
        assert await lines_of(text[:cut], text[cut:]) == whole, cut
    assert await lines_of(*(bytes([b]) for b in text)) == whole


@pytest.mark.parametrize("newline", [b"\r\n", b"\r", b"\n"])
async def test_every_newline_ends_a_line(newline: bytes) -> None:
    lines = await lines_of(b"event: x" + newline + b"data: 1" + newline)
    assert [line for line in lines if line] == ["event: x", "data: 1"]


async def test_a_last_line_without_newline_is_kept() -> None:
    assert await lines_of(b"data: 1\ndata: 2") == ["data: 1", "data: 2"]


async def test_undecodable_bytes_are_replaced_not_raised() -> None:
    assert await lines_of(b"data: \xff\n") == ["data: \ufffd"]
