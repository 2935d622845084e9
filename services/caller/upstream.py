"""One seat's provider call over HTTP: key, request, retries and deadline, down to one `CallReport`.

The key never leaves this module: anything a provider echoes back is redacted before it is returned.
The HTTP client is httpx's API over the aiohttp transport (FIELD-NOTES: httpx's own transport collapses
at 128 calls in flight).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import replace

import httpx
from httpx_aiohttp import HttpxAiohttpClient

from services.caller.keys import KeyStore, is_loopback, missing_key
from services.caller.openai_chat import (
    MAX_REPLY_BYTES,
    StreamParser,
    UpstreamRequest,
    bad_base,
    build_request,
    http_error_text,
    parse_plain,
    parse_stream,
    refuses_streaming,
    without_stream_extras,
)
from services.caller.outcome import CallOutcome, CallReport, Tally, client_failed, no_answer_text
from services.caller.redaction import without_key
from services.caller.retries import doubled_budget, retry_wait
from shared.commands import SeatCall

CONNECT_TIMEOUT_S = 10.0
WRITE_TIMEOUT_S = 30.0


class ReplyTooLarge(Exception):
    pass


def make_client(max_connections: int) -> httpx.AsyncClient:
    """One per process; per-call time limits come from each seat's deadline, not from the client."""
    return HttpxAiohttpClient(
        limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        timeout=httpx.Timeout(connect=CONNECT_TIMEOUT_S, read=None, write=WRITE_TIMEOUT_S, pool=None),
        follow_redirects=False,  # SEC-8: a redirect would carry the key elsewhere
    )


class Upstream:
    def __init__(self, client: httpx.AsyncClient, keys: KeyStore,
                 clock: Callable[[], float] = time.time, chance: Callable[[], float] = random.random) -> None:
        self.client, self.keys, self.clock, self.chance = client, keys, clock, chance

    async def call(self, call: SeatCall) -> CallReport:
        started = time.monotonic()
        key = self.keys.key_for(call.endpoint)
        refusal = self._refusal(call, key)
        if refusal:
            return CallReport(client_failed(refusal), 0, None, time.monotonic() - started)
        tally = Tally()
        try:
            async with asyncio.timeout(call.deadline - self.clock()):
                outcome = await self._with_retries(call, build_request(call, key), tally)
        except TimeoutError:
            outcome = CallOutcome(error=no_answer_text(call.timeout_s))
        outcome.error, outcome.text = without_key(outcome.error, key), without_key(outcome.text, key)
        return CallReport(outcome, tally.attempts, tally.usage, time.monotonic() - started)

    @staticmethod
    def _refusal(call: SeatCall, key: str | None) -> str | None:
        if call.api != "chat":
            return f"api {call.api!r} is not supported by this caller yet"
        why = bad_base(call.base)
        if why:
            return why
        if key is None and not is_loopback(call.base):
            return missing_key(call.endpoint)
        return None

    async def _with_retries(self, call: SeatCall, request: UpstreamRequest, tally: Tally) -> CallOutcome:
        retries, budget_retried = 0, False
        while True:
            tally.sent()
            outcome = await self.attempt(request)
            tally.answered(outcome)
            fallback = self._stream_fallback(request, outcome)
            if fallback is not None:
                request = fallback
                continue
            bigger = None if budget_retried else doubled_budget(outcome, call.purpose, request.body)
            if bigger is not None:
                request, budget_retried = replace(request, body=bigger), True
                continue
            wait = retry_wait(outcome, retries, call.retries, self.clock(), call.deadline, self.chance)
            if wait is None:
                return outcome
            retries += 1
            await asyncio.sleep(wait)

    @staticmethod
    def _stream_fallback(request: UpstreamRequest, outcome: CallOutcome) -> UpstreamRequest | None:
        """U-2: a provider that refuses our streaming fields is asked again without them."""
        if outcome.http_status is None or not refuses_streaming(outcome.http_status, outcome.error):
            return None
        return without_stream_extras(request)

    async def attempt(self, request: UpstreamRequest) -> CallOutcome:
        """One HTTP request; every failure becomes an outcome, none an exception."""
        try:
            reply = self.client.stream("POST", request.url, headers=request.headers, json=request.body)
            async with reply as resp:
                if not 200 <= resp.status_code < 300:
                    return await self._http_error(resp)
                outcome = await self._read_reply(resp)
                outcome.http_status = resp.status_code
                return outcome
        except httpx.TransportError as exc:
            why = f"connection error: {type(exc).__name__}: {exc}".rstrip(": ")
            return CallOutcome(error=f"Error: client failed: {why}", connection_failed=True)
        except ReplyTooLarge:
            return client_failed(f"reply larger than {MAX_REPLY_BYTES // (1024 * 1024)} MB")
        except Exception as exc:  # whatever a provider does, the seat is still recorded
            return client_failed(f"{type(exc).__name__}: {exc}")

    @staticmethod
    async def _http_error(resp: httpx.Response) -> CallOutcome:
        body = (await read_capped(resp)).decode(errors="replace")
        retry_after = resp.headers.get("retry-after")
        return CallOutcome(error=http_error_text(resp.status_code, body, retry_after),
                           http_status=resp.status_code, retry_after=retry_after)

    @staticmethod
    async def _read_reply(resp: httpx.Response) -> CallOutcome:
        if "text/event-stream" not in resp.headers.get("content-type", ""):
            raw = await read_capped(resp)
            return parse_stream(raw) if raw.lstrip().startswith(b"data:") else parse_plain(raw)
        parser, size = StreamParser(), 0
        async for line in resp.aiter_lines():
            size += len(line) + 1
            if size > MAX_REPLY_BYTES:
                raise ReplyTooLarge
            parser.feed_line(line)
            if parser.done or parser.outcome.error:
                break
        return parser.finish()


async def read_capped(resp: httpx.Response) -> bytes:
    chunks, size = [], 0
    async for chunk in resp.aiter_bytes():
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise ReplyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)
