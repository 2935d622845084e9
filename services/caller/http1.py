"""The caller's HTTP/1.1 transport to providers: asyncio's own connections and httptools' parser behind
httpx's transport seam (`httpx.AsyncBaseTransport`).

Every seat and every route turn is one provider request, so the client's cost is paid on every answer.
On this 2-core machine httpx over aiohttp took about 360 µs of CPU and 490-560 µs of wall time per
streamed request to the fake provider; this takes about 190 and 340, against 85 and 300 for a bare
protocol with the same parser (`python -m benchmarks.http_transport`). aiohttp's session, timers, traces,
URL and header objects, and httpx's wrapping of them, did nothing a provider call needs.

What is kept: connections kept alive and reused per origin, a cap on connections in use, TLS (httpx's
default context: certifi, or `SSL_CERT_FILE`), a reply streamed as it is read with backpressure, and every
network failure raised as httpx's `TransportError` kinds, which the caller's retries and outcomes read.
Never a redirect, a proxy or a decoded body: the caller follows none (SEC-8) and asks for no compression;
a client over this transport decodes `Content-Encoding` itself, as httpx does over any transport.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import Any, cast

import httptools
import httpx

Origin = tuple[str, str, int]
DEFAULT_PORTS = {"http": 80, "https": 443}
HIGH_WATER = 256 * 1024  # bytes of reply held unread before the socket is paused


class Connection(asyncio.Protocol):
    """One kept-alive connection and the reply being read on it (one at a time: no pipelining)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.lost: BaseException | None = None
        self.closed = False
        self.idle_since = 0.0
        self._begin()

    def _begin(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.head: list[tuple[bytes, bytes]] = []
        self.status = 0
        self.framed = False  # a Content-Length or chunked body: the reply's end is in the bytes
        self.headed = False
        self.complete = False
        self.keep_alive = False
        self.failed: httpx.TransportError | None = None
        self.chunks: list[bytes] = []
        self.held = 0
        self.paused = False
        self._waiter: asyncio.Future[None] | None = None

    # asyncio's side
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio's classes

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"malformed reply: {exc}"))
            self.close()

    def eof_received(self) -> bool | None:
        return False  # close our side too: a half-closed connection is never used again

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.headed and not self.framed and not self.complete and self.failed is None:
            self.complete = True  # a body that runs until the connection closes has ended
        elif not self.complete:
            gone = "the provider closed the connection" + (f" ({exc})" if exc else "")
            self._fail(httpx.ReadError(gone) if self.headed else httpx.RemoteProtocolError(gone))
        self._wake()

    # httptools' side
    def on_header(self, name: bytes, value: bytes) -> None:
        self.head.append((name, value))
        lowered = name.lower()
        if lowered == b"content-length" or (lowered == b"transfer-encoding" and b"chunked" in value.lower()):
            self.framed = True

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        if self.status < 200:  # an interim reply (100 Continue): the real one follows on the same bytes
            self.head, self.framed = [], False
            return
        self.headed = True
        self._wake()

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)
        self.held += len(body)
        if self.held > HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        if self.headed:
            self.complete = True
            self.keep_alive = self.parser.should_keep_alive()  # asked now: the parser resets after this
            self._wake()

    # the transport's side
    def send(self, head: bytes, body: bytes) -> None:
        assert self.transport is not None
        self._begin()
        self.transport.writelines((head, body))

    async def wait(self, timeout: float | None) -> None:
        """Until the parser has more to say (headers, body, the end or a failure)."""
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            if timeout is None:  # the caller's own deadline bounds the call
                await self._waiter
                return
            async with asyncio.timeout(timeout):
                await self._waiter
        except TimeoutError:
            raise httpx.ReadTimeout(f"no reply bytes within {timeout:g}s") from None
        finally:
            self._waiter = None

    def take(self) -> bytes:
        data = b"".join(self.chunks) if len(self.chunks) > 1 else self.chunks[0]
        self.chunks, self.held = [], 0
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return data

    def reusable(self) -> bool:
        finished = self.complete and self.failed is None and not self.chunks
        return finished and self.keep_alive and not self.closed

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def _fail(self, error: httpx.TransportError) -> None:
        if self.failed is None and not self.complete:
            self.failed = error
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class Body(httpx.AsyncByteStream):
    """A reply's body as it is read; closing it gives its connection back (or closes it)."""

    def __init__(self, connection: Connection, release: Callable[[Connection], None], timeout: float | None
                 ) -> None:
        self.connection, self.release, self.timeout = connection, release, timeout
        self.released = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self.connection
        while True:
            if connection.chunks:
                yield connection.take()
            elif connection.complete:
                return
            elif connection.failed is not None:
                raise connection.failed
            else:
                await connection.wait(self.timeout)

    async def aclose(self) -> None:
        if not self.released:
            self.released = True
            self.release(self.connection)


class Http1Transport(httpx.AsyncBaseTransport):
    """Kept-alive HTTP/1.1 connections per origin, at most `max_connections` in use at once (a request
    beyond them waits for one); an idle one is dropped after `keepalive_s` or when its server closes it.
    `on_connection` is told each time a request is handed its connection, just before its bytes are
    written (where a provider starts counting it)."""

    def __init__(self, max_connections: int, keepalive_s: float = 5.0,
                 ssl_context: ssl.SSLContext | None = None, on_connection: Callable[[], None] | None = None
                 ) -> None:
        self.slots = asyncio.Semaphore(max_connections) if max_connections else None
        self.keepalive_s = keepalive_s
        self.ssl_context = ssl_context
        self.on_connection = on_connection
        self.idle: dict[Origin, list[Connection]] = {}
        self.swept = time.monotonic()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {url.scheme!r}")
        origin = (url.scheme, url.host, url.port or DEFAULT_PORTS[url.scheme])
        timeouts: dict[str, Any] = request.extensions.get("timeout", {})
        body = request.content if isinstance(request.stream, httpx.ByteStream) else await request.aread()
        if self.slots is not None:
            await self.slots.acquire()
        connection = None
        try:
            connection = self._idle(origin) or await self._connect(origin, request, timeouts.get("connect"))
            if self.on_connection is not None:
                self.on_connection()
            connection.send(head_of(request), body)
            while not connection.headed:
                if connection.failed is not None:
                    raise connection.failed
                await connection.wait(timeouts.get("read"))
        except BaseException:
            if connection is not None:
                connection.close()
            self._release_slot()
            raise
        reason = httpx.codes.get_reason_phrase(connection.status).encode()
        return httpx.Response(connection.status, headers=connection.head, request=request,
                              stream=Body(connection, partial(self.release, origin), timeouts.get("read")),
                              extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason})

    def _idle(self, origin: Origin) -> Connection | None:
        """The most recently used kept-alive connection still open and fresh, if any."""
        kept = self.idle.get(origin)
        now = time.monotonic()
        while kept:
            connection = kept.pop()
            if not connection.closed and now - connection.idle_since < self.keepalive_s:
                return connection
            connection.close()
        return None

    async def _connect(self, origin: Origin, request: httpx.Request, timeout: float | None) -> Connection:
        scheme, host, port = origin
        tls = (self.ssl_context or default_ssl_context()) if scheme == "https" else None
        server_name = (request.extensions.get("sni_hostname") or host) if tls is not None else None
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                _, connection = await loop.create_connection(Connection, host, port, ssl=tls,
                                                             server_hostname=server_name)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"no connection to {host}:{port} within {timeout:g}s") from None
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(f"{host}:{port}: {exc}") from exc
        return connection

    def release(self, origin: Origin, connection: Connection) -> None:
        now = time.monotonic()
        if connection.reusable():
            connection.idle_since = now
            self.idle.setdefault(origin, []).append(connection)
        else:
            connection.close()
        self._release_slot()
        if now - self.swept > self.keepalive_s:  # an origin no call goes to any more keeps no socket open
            self.swept = now
            for kept in self.idle.values():
                for stale in [c for c in kept if c.closed or now - c.idle_since >= self.keepalive_s]:
                    kept.remove(stale)
                    stale.close()

    def _release_slot(self) -> None:
        if self.slots is not None:
            self.slots.release()

    async def aclose(self) -> None:
        for kept in self.idle.values():
            for connection in kept:
                connection.close()
        self.idle.clear()


def head_of(request: httpx.Request) -> bytes:
    """The request line and headers (httpx's request holds Host and Content-Length already)."""
    lines = [b"%s %s HTTP/1.1" % (request.method.encode(), request.url.raw_path)]
    lines += [b"%s: %s" % (name, value) for name, value in request.headers.raw]
    return b"\r\n".join(lines) + b"\r\n\r\n"


_DEFAULT_SSL: list[ssl.SSLContext] = []


def default_ssl_context() -> ssl.SSLContext:
    """httpx's default (certifi, or `SSL_CERT_FILE` / `SSL_CERT_DIR`), made once, on the first HTTPS call."""
    if not _DEFAULT_SSL:
        _DEFAULT_SSL.append(httpx.create_ssl_context(trust_env=True))
    return _DEFAULT_SSL[0]
