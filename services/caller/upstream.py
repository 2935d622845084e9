"""One seat's provider call over HTTP: key, pacing, request, retries and deadline, down to one `CallReport`.

Every API kind goes through the same loop; its adapter builds the request and reads the reply. The key
never leaves this module: anything a provider echoes back is redacted before it is returned. Provider
requests go straight to httpx's transport seam, here our own HTTP/1.1 transport (`http1.py`; httpx's own
collapses at 128 calls in flight (FIELD-NOTES), and httpx over aiohttp took twice its CPU): the client's
layers (redirects, which U-2 forbids anyway, auth, cookies, URL merging) cost CPU on every seat and do
nothing for us. Listing models still uses a client.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from functools import lru_cache
from urllib.parse import urlsplit

import httpx

from services.caller.adapters import ADAPTERS, Adapter
from services.caller.endpoint_base import REFUSALS, base_refusal
from services.caller.http1 import Http1Transport
from services.caller.keys import KeyStore, missing_key
from services.caller.outcome import CallOutcome, CallReport, Tally, client_failed, no_answer_text
from services.caller.pacer import Pacer, Ticket
from services.caller.paid_guard import PaidGuard
from services.caller.quota_headers import quotas_from
from services.caller.redaction import without_key
from services.caller.retries import doubled_budget, retry_wait
from services.caller.wire import MAX_REPLY_BYTES, UpstreamRequest, bad_base, http_error_text
from shared.commands import SeatCall
from shared.loopback import is_loopback

CONNECT_TIMEOUT_S = 10.0
WRITE_TIMEOUT_S = 30.0
CHARS_PER_TOKEN = 4


class ReplyTooLarge(Exception):
    pass


# Per-call time limits come from each seat's deadline, not from the connection.
TIMEOUTS = {"connect": CONNECT_TIMEOUT_S, "read": None, "write": WRITE_TIMEOUT_S, "pool": None}


# The request this task has in flight: the clock to read and where to note the moment its connection was
# handed over, which is when its bytes are written, where a provider starts counting it (L-2).
SENDING: ContextVar[tuple[Callable[[], float], list[float]] | None] = ContextVar("sending", default=None)


def note_sending() -> None:
    """Told by the transport when a request is handed its connection (a new one once connected); its
    bytes are written right after, in the same loop turn."""
    sending = SENDING.get()
    if sending is not None:
        clock, moments = sending
        moments.append(clock())


def make_transport(max_connections: int) -> httpx.AsyncBaseTransport:
    """One per process, its connections kept alive and shared by every call. It never follows a redirect
    (SEC-8: a redirect would carry the key elsewhere)."""
    return Http1Transport(max_connections, on_connection=note_sending)


def make_client(transport: httpx.AsyncBaseTransport) -> httpx.AsyncClient:
    """A client over the same transport, for the few requests that are not provider calls; like them, it
    takes no proxy from the environment."""
    return httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(**TIMEOUTS), follow_redirects=False,
                             trust_env=False)


@lru_cache(maxsize=1024)
def parsed_url(url: str) -> httpx.URL:
    """A provider's few URLs, parsed once: parsing one for every request showed in the caller's profile."""
    return httpx.URL(url)


def estimated_tokens(request: UpstreamRequest) -> int:
    """L-2's in-flight estimate: the request body's JSON over four."""
    return len(request.text) // CHARS_PER_TOKEN


class OpenTicket:
    """The pacing ticket of the HTTP request in flight, settled even when the deadline cuts it."""

    def __init__(self) -> None:
        self.ticket: Ticket | None = None
        self.tokens = 0


class Upstream:
    def __init__(self, transport: httpx.AsyncBaseTransport, keys: KeyStore, pacer: Pacer,
                 clock: Callable[[], float] = time.time, chance: Callable[[], float] = random.random,
                 guard: PaidGuard | None = None) -> None:
        self.transport, self.keys, self.pacer, self.clock, self.chance = transport, keys, pacer, clock, chance
        # U-5 over the same folded configuration the pacer's limits come from.
        self.guard = guard if guard is not None else PaidGuard(pacer.book.config)

    async def call(self, call: SeatCall) -> CallReport:
        started = time.monotonic()
        key = self.keys.key_for(call.endpoint)
        refusal = self.refusal(call, key)
        if refusal:
            return CallReport(client_failed(refusal), 0, None, time.monotonic() - started)
        tally, open_ticket = Tally(), OpenTicket()
        try:
            async with asyncio.timeout(call.deadline - self.clock()):
                outcome = await self._with_retries(call, ADAPTERS[call.api], key, tally, open_ticket)
        except TimeoutError:
            outcome = CallOutcome(error=no_answer_text(call.timeout_s))
        if open_ticket.ticket is not None:  # cut by the deadline: the estimate stands
            await self.pacer.settle(call, open_ticket.ticket, open_ticket.tokens, [])
        outcome.error, outcome.text = without_key(outcome.error, key), without_key(outcome.text, key)
        return CallReport(outcome, tally.attempts, tally.usage, time.monotonic() - started,
                          tally.paced, round(tally.waited_s, 3), tally.quotas)

    def refusal(self, call: SeatCall, key: str | None) -> str | None:
        """Why the call is not sent at all (nothing paced, no request); None when it may go."""
        if call.api not in ADAPTERS:
            return f"api {call.api!r} is not supported (one of {', '.join(ADAPTERS)})"
        why = bad_base(call.base)
        if why:
            return why
        why = base_refusal(self.pacer.book.config, call.endpoint, call.base)
        if why:
            REFUSALS.note(call.endpoint, call.base, call.purpose)
            return why
        if key is None and not is_loopback(call.base):
            return missing_key(call.endpoint)
        return None

    async def _with_retries(
        self, call: SeatCall, adapter: Adapter, key: str | None, tally: Tally, open_ticket: OpenTicket
    ) -> CallOutcome:
        request = adapter.build(call, key)
        retries, budget_retried, last = 0, False, None
        while True:
            outcome = await self.paced_attempt(call, request, tally, open_ticket,
                                               lambda sent: self.attempt(sent, adapter))
            if tally.refused:
                return last or outcome
            last = outcome
            fallback = adapter.fallback(request, outcome)
            if fallback is not None:
                request = fallback
                continue
            bigger = None if budget_retried else doubled_budget(outcome, call.purpose, call.options)
            if bigger is not None:
                request = adapter.build(call.model_copy(update={"options": bigger}), key)
                budget_retried = True
                continue
            wait = retry_wait(outcome, retries, call.retries, self.clock(), call.deadline, self.chance)
            if wait is None:
                return outcome
            retries += 1
            await asyncio.sleep(wait)

    async def paced_attempt(self, call: SeatCall, request: UpstreamRequest, tally: Tally,
                            open_ticket: OpenTicket,
                            send: Callable[[UpstreamRequest], Awaitable[CallOutcome]],
                            admit_as: SeatCall | None = None) -> CallOutcome:
        """`send(request)` through the free-tier guard (U-5) and the pacer (admitted as `admit_as`, by
        default the call), its ticket settled with the usage the reply reported. When either refuses it,
        `tally.refused` is set and the outcome carries the refusal. Every provider request (seat, route)
        passes here, so this is where a held model is stopped."""
        held = self.guard.holds(call.alias, call.served)
        if held is not None:
            tally.refused = True
            return held
        tokens = estimated_tokens(request)
        admission = await self.pacer.admit(admit_as or call, tokens, f"{call.call}:{uuid.uuid4().hex[:12]}")
        tally.waited = tally.waited or admission.paced == "waited"
        tally.waited_s += admission.waited_s if admission.paced == "waited" else 0.0
        if admission.paced == "refused":
            tally.refused = True
            return CallOutcome(error=admission.refusal)
        open_ticket.ticket, open_ticket.tokens = admission.ticket, tokens
        tally.sent()
        outcome = await send(request)
        tally.answered(outcome)
        used = outcome.usage.tokens_in + outcome.usage.tokens_out if outcome.usage else tokens
        await self.pacer.settle(call, open_ticket.ticket, used, outcome.quotas, outcome.sent_at)
        open_ticket.ticket = None
        return outcome

    async def attempt(self, request: UpstreamRequest, adapter: Adapter) -> CallOutcome:
        sent = time.monotonic()
        return await self.exchange(request, lambda resp: self._read_reply(resp, adapter, sent))

    async def exchange(self, request: UpstreamRequest,
                       read: Callable[[httpx.Response], Awaitable[CallOutcome]]) -> CallOutcome:
        """One HTTP request, its 2xx reply read by `read`; every failure becomes an outcome, none an
        exception."""
        host = (urlsplit(request.url).hostname or "").lower()
        left: list[float] = []
        noting = SENDING.set((self.clock, left))
        try:
            return await self._exchange(request, read, host, left)
        finally:
            SENDING.reset(noting)

    async def _exchange(
        self, request: UpstreamRequest, read: Callable[[httpx.Response], Awaitable[CallOutcome]], host: str,
        left: list[float],
    ) -> CallOutcome:
        try:
            sent = httpx.Request(request.method, parsed_url(request.url), headers=request.headers,
                                 content=request.content, extensions={"timeout": TIMEOUTS})
            resp = await self.transport.handle_async_request(sent)
            try:
                if not 200 <= resp.status_code < 300:
                    outcome = await self._http_error(resp, host, self.clock())
                else:
                    outcome = await read(resp)
                    outcome.http_status = resp.status_code
                    outcome.quotas = quotas_from(resp.headers, resp.status_code, "", host, self.clock())
                outcome.sent_at = max(left) if left else None
                return outcome
            finally:
                await resp.aclose()
        except httpx.TransportError as exc:
            why = f"connection error: {type(exc).__name__}: {exc}".rstrip(": ")
            return CallOutcome(error=f"Error: client failed: {why}", connection_failed=True)
        except ReplyTooLarge:
            return client_failed(f"reply larger than {MAX_REPLY_BYTES // (1024 * 1024)} MB")
        except Exception as exc:  # whatever a provider does, the call is still recorded
            return client_failed(f"{type(exc).__name__}: {exc}")

    @staticmethod
    async def _http_error(resp: httpx.Response, host: str, now: float) -> CallOutcome:
        body = (await read_capped(resp)).decode(errors="replace")
        retry_after = resp.headers.get("retry-after")
        return CallOutcome(error=http_error_text(resp.status_code, body, retry_after),
                           http_status=resp.status_code, retry_after=retry_after,
                           quotas=quotas_from(resp.headers, resp.status_code, body, host, now))

    @staticmethod
    async def _read_reply(resp: httpx.Response, adapter: Adapter, sent: float) -> CallOutcome:
        """The reply as an outcome; a streamed one also says how long its first event took after sending
        (HL-2's time to first token)."""
        if "text/event-stream" not in resp.headers.get("content-type", ""):
            raw = await read_capped(resp)
            if not raw.lstrip().startswith((b"data:", b"event:")):
                return adapter.parse_plain(raw)
            parser = adapter.parser()
            for line in raw.decode(errors="replace").splitlines():
                parser.feed_line(line)
            return parser.finish()
        parser, size, first = adapter.parser(), 0, None
        async for line in sse_lines(resp):
            size += len(line) + 1
            if size > MAX_REPLY_BYTES:
                raise ReplyTooLarge
            if first is None and line.startswith("data:"):
                first = round(time.monotonic() - sent, 3)
            parser.feed_line(line)
            if parser.done or parser.outcome.error:
                break
        outcome = parser.finish()
        outcome.first_token_s = first
        return outcome


async def sse_lines(resp: httpx.Response) -> AsyncIterator[str]:
    """A streamed reply's lines, split from its bytes and each decoded once whole (httpx's own line reader
    decodes text first and then splits it, a layer more on every chunk of every call)."""
    pending = b""
    async for chunk in resp.aiter_bytes():
        lines = (pending + chunk).splitlines(keepends=True)
        pending = lines.pop() if lines and not lines[-1].endswith((b"\n", b"\r")) else b""
        for line in lines:
            yield line.rstrip(b"\r\n").decode(errors="replace")
    if pending:
        yield pending.decode(errors="replace")


async def read_capped(resp: httpx.Response) -> bytes:
    chunks, size = [], 0
    async for chunk in resp.aiter_bytes():
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise ReplyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)
