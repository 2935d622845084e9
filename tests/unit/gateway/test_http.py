"""Reading a request body under H-2: JSON content type, a sane length, the size limit, a JSON object."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.requests import Request
from starlette.types import Message

from services.gateway.http import IMAGE_ADVICE, deeper_than, parse_json, read_json_body
from shared.refusal import Refusal


def request(body: bytes, headers: dict[str, str], chunk: int = 0) -> tuple[Request, list[int]]:
    """A request whose body arrives in chunks; the list counts how many chunks the reader asked for."""
    asked: list[int] = []
    pieces = [body[i : i + chunk] for i in range(0, len(body), chunk)] if chunk else [body]

    async def receive() -> Message:
        asked.append(1)
        piece = pieces.pop(0) if pieces else b""
        return {"type": "http.request", "body": piece, "more_body": bool(pieces)}

    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    scope = {"type": "http", "method": "POST", "path": "/", "headers": raw, "query_string": b""}
    return Request(scope, receive), asked


async def refusal(req: Request, limit: int = 100) -> Refusal:
    with pytest.raises(Refusal) as caught:
        await read_json_body(req, limit, IMAGE_ADVICE)
    return caught.value


JSON = {"content-type": "application/json; charset=utf-8"}


async def test_a_json_object_is_read() -> None:
    req, _ = request(b'{"a": 1}', JSON, chunk=3)
    assert await read_json_body(req, 100) == {"a": 1}


@pytest.mark.parametrize("content_type", ["text/plain", "", "application/x-www-form-urlencoded"])
async def test_other_content_types_are_415(content_type: str) -> None:
    req, _ = request(b"{}", {"content-type": content_type} if content_type else {})
    assert (await refusal(req)).status == 415


async def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    req, asked = request(b"{}", {**JSON, "content-length": "101"})
    refused = await refusal(req)
    assert refused.status == 413
    assert refused.message.startswith("body is 101 bytes; the limit is 100.")
    assert "http(s) URLs" in refused.message
    assert asked == []


async def test_an_undeclared_body_over_the_limit_is_refused_while_reading() -> None:
    req, asked = request(b'{"a": "' + b"x" * 200 + b'"}', JSON, chunk=50)
    assert (await refusal(req)).status == 413
    assert len(asked) < 5  # stopped before the end


async def test_a_bad_length_is_400() -> None:
    req, _ = request(b"{}", {**JSON, "content-length": "-1"})
    assert (await refusal(req)).status == 400


@pytest.mark.parametrize(
    ("body", "message"), [(b"{nope", "body is not JSON"), (b"[1]", "body must be a JSON object")]
)
async def test_the_body_must_be_a_json_object(body: bytes, message: str) -> None:
    req, _ = request(body, JSON)
    refused = await refusal(req)
    assert (refused.status, refused.message) == (400, message)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"temperature": NaN}', "body is not JSON"),
        (b'{"a": -Infinity}', "body is not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "body is not JSON"),
        (b'{"a": ' + b"[" * 70 + b"]" * 70 + b"}", "body is nested deeper than 64 levels"),
        (b'{"prompt": "\\ud800"}', "body is not valid Unicode (it has a lone surrogate escape"),
        (b'{"prompt": "\xed\xa0\x80"}', "body is not valid Unicode (it has a lone surrogate escape"),
        (b'{"a": 1} {"b": 2}', "body is not JSON"),
        (b"\xff\xfe{}", "body is not JSON"),
    ],
)
async def test_what_no_reply_or_bus_message_could_carry_is_refused_at_the_door(
    body: bytes, message: str
) -> None:
    req, _ = request(body, JSON)
    refused = await refusal(req, limit=1_000_000)
    assert refused.status == 400 and refused.message.startswith(message)


async def test_paired_surrogates_and_moderate_nesting_are_fine() -> None:
    body = b'{"a": "\\ud83d\\ude00", "b": ' + b"[" * 60 + b"]" * 60 + b"}"
    req, _ = request(body, JSON)
    read = await read_json_body(req, 1000)
    assert read["a"] == "\U0001f600"


async def test_what_only_the_strict_reading_takes_is_still_read() -> None:
    """A byte-order mark, or UTF-16: the fast parser refuses them, the strict one reads them as before."""
    for body in (b'\xef\xbb\xbf{"a": "\xc3\xa9"}', '{"a": "é"}'.encode("utf-16")):
        req, _ = request(body, JSON)
        assert await read_json_body(req, 1000) == {"a": "é"}


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@given(value=st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4), ascii_only=st.booleans())
def test_a_body_reads_as_json_loads_reads_it(value: dict[str, object], ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    try:
        expected = json.loads(raw)
        json.dumps(expected, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # hypothesis' text holds lone surrogates too: those are refused
        with pytest.raises(Refusal, match="lone surrogate"):
            parse_json(raw)
        return
    assert parse_json(raw) == expected


def nesting(value: object) -> int:
    """Levels of arrays and objects, the plain recursive way: 0 for a scalar."""
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
    if children is None:
        return 0
    return 1 + max((nesting(child) for child in children), default=0)


@given(value=JSON_VALUES, limit=st.integers(0, 6))
def test_deeper_than_says_whether_a_container_sits_that_far_down(value: object, limit: int) -> None:
    assert deeper_than(value, limit) == (nesting(value) > limit)
