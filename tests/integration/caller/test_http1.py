"""The caller's HTTP/1.1 transport against scripted servers on loopback: kept-alive connections reused and
dropped when their server closes them, replies streamed as read (chunked, sized or until close), the cap on
connections in use, TLS, and every broken reply raised as httpx's `TransportError` kinds."""

from __future__ import annotations

import asyncio
import datetime
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from services.caller.http1 import HIGH_WATER, Body, Http1Transport

Reply = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


class Server:
    """A loopback server that reads each request whole and answers it with `reply`; it counts connections."""

    def __init__(self, reply: Reply) -> None:
        self.reply, self.connections, self.requests = reply, 0, 0
        self.writers: list[asyncio.StreamWriter] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                await reader.readexactly(length)
                self.requests += 1
                await self.reply(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def serving(reply: Reply, tls: ssl.SSLContext | None = None) -> AsyncIterator[tuple[Server, str]]:
    server = Server(reply)
    listening = await asyncio.start_server(server.handle, "127.0.0.1", 0, ssl=tls)
    port = listening.sockets[0].getsockname()[1]
    try:
        yield server, f"{'https' if tls else 'http'}://{'localhost' if tls else '127.0.0.1'}:{port}/v1/x"
    finally:
        for writer in server.writers:
            writer.close()
        listening.close()
        await listening.wait_closed()


def answer(data: bytes, close: bool = False) -> Reply:
    """Every request answered with `data`, the connection closed after it with `close`."""
    async def reply(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(data)
        await writer.drain()
        if close:
            writer.close()
    return reply


def origin_of(url: str) -> tuple[str, str, int]:
    parsed = httpx.URL(url)
    assert parsed.port is not None
    return parsed.scheme, parsed.host, parsed.port


async def until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    for _ in range(int(timeout / 0.01)):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"not within {timeout:g}s")


async def fetch(transport: Http1Transport, url: str, body: bytes = b"{}") -> tuple[int, bytes]:
    response = await transport.handle_async_request(httpx.Request("POST", url, content=body))
    try:
        return response.status_code, b"".join([chunk async for chunk in response.aiter_raw()])
    finally:
        await response.aclose()


async def test_a_kept_alive_connection_carries_the_next_request() -> None:
    async with serving(answer(OK)) as (server, url):
        transport = Http1Transport(4)
        assert [await fetch(transport, url) for _ in range(3)] == [(200, b"ok")] * 3
        assert (server.connections, server.requests) == (1, 3)
        await transport.aclose()


async def test_a_chunked_reply_is_read_as_it_comes_and_its_connection_kept() -> None:
    release = asyncio.Event()

    async def reply(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n6\r\ndata: \r\n")
        await writer.drain()
        await release.wait()
        writer.write(b"3\r\nhi\n\r\n0\r\n\r\n")
        await writer.drain()

    async with serving(reply) as (server, url):
        transport = Http1Transport(4)
        response = await transport.handle_async_request(httpx.Request("POST", url, content=b"{}"))
        assert response.headers["content-type"] == "text/event-stream"
        chunks = aiter(response.aiter_raw())
        assert await anext(chunks) == b"data: "  # before the server has sent the rest
        release.set()
        assert b"".join([chunk async for chunk in chunks]) == b"hi\n"
        await response.aclose()
        await fetch(transport, url)
        assert server.connections == 1
        await transport.aclose()


async def test_a_reply_that_runs_until_the_connection_closes_is_whole_and_its_connection_not_kept() -> None:
    async with serving(answer(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it", close=True)) as (
            server, url):
        transport = Http1Transport(4)
        assert await fetch(transport, url) == (200, b"all of it")
        assert await fetch(transport, url) == (200, b"all of it")
        assert server.connections == 2
        await transport.aclose()


async def test_a_reply_cut_short_is_a_read_error_and_a_garbled_one_a_protocol_error() -> None:
    cut = answer(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten..", close=True)
    async with serving(cut) as (_, url):
        with pytest.raises(httpx.ReadError):
            await fetch(Http1Transport(4), url)
    async with serving(answer(b"NOT HTTP AT ALL\r\n\r\n")) as (_, url):
        with pytest.raises(httpx.RemoteProtocolError):
            await fetch(Http1Transport(4), url)
    async with serving(answer(b"", close=True)) as (_, url):  # closes without a word
        with pytest.raises(httpx.RemoteProtocolError):
            await fetch(Http1Transport(4), url)


async def test_nothing_listening_is_a_connect_error() -> None:
    async with serving(answer(OK)) as (_, url):
        pass  # closed: its port is free again
    with pytest.raises(httpx.ConnectError):
        await fetch(Http1Transport(4), url)


async def test_a_connection_its_server_closed_while_idle_is_not_used_again() -> None:
    async with serving(answer(OK)) as (server, url):
        transport = Http1Transport(4)
        await fetch(transport, url)
        server.writers[0].close()
        (kept,) = transport.idle[origin_of(url)]
        await until(lambda: kept.closed)  # its close reaches our side
        assert await fetch(transport, url) == (200, b"ok")
        assert server.connections == 2
        await transport.aclose()


async def test_no_more_connections_than_the_cap_are_in_use_at_once() -> None:
    release = asyncio.Event()

    async def held(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await release.wait()
        writer.write(OK)
        await writer.drain()

    async with serving(held) as (server, url):
        transport = Http1Transport(1)
        first = asyncio.create_task(fetch(transport, url))
        second = asyncio.create_task(fetch(transport, url))
        await until(lambda: server.requests == 1)
        await asyncio.sleep(0.1)  # room for a second request to be sent, were it allowed
        assert (server.connections, server.requests) == (1, 1) and not second.done()
        release.set()
        assert await first == await second == (200, b"ok")
        assert (server.connections, server.requests) == (1, 2)
        await transport.aclose()


async def test_an_interim_reply_is_skipped_for_the_real_one() -> None:
    async with serving(answer(b"HTTP/1.1 100 Continue\r\n\r\n" + OK)) as (_, url):
        assert await fetch(Http1Transport(4), url) == (200, b"ok")


async def test_a_reply_read_slowly_is_held_up_to_a_bound_and_arrives_whole() -> None:
    big = bytes(range(256)) * 8192  # 2 MB, well past the high-water mark
    async with serving(answer(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(big) + big)) as (_, url):
        response = await Http1Transport(4).handle_async_request(httpx.Request("POST", url, content=b"{}"))
        body = response.stream
        assert isinstance(body, Body)
        for _ in range(50):  # the loop free to read all it is given while nobody reads the body
            await asyncio.sleep(0.01)
        assert HIGH_WATER < body.connection.held <= 2 * HIGH_WATER  # paused, not 2 MB
        assert b"".join([chunk async for chunk in body]) == big


async def test_https_with_a_trusted_certificate_and_refused_without(tmp_path: Path) -> None:
    server_tls, client_tls = certificates(tmp_path)
    async with serving(answer(OK), server_tls) as (_, url):
        assert await fetch(Http1Transport(4, ssl_context=client_tls), url) == (200, b"ok")
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await fetch(Http1Transport(4), url)  # httpx's default trust: certifi's authorities


async def test_a_request_names_its_connection_just_before_it_is_written() -> None:
    told: list[int] = []
    async with serving(answer(OK)) as (server, url):
        transport = Http1Transport(4, on_connection=lambda: told.append(server.requests))
        await fetch(transport, url)
        await fetch(transport, url)
        assert told == [0, 1]  # each time before the server had the request
        await transport.aclose()


def certificates(folder: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A self-signed certificate for `localhost`: the server's context, and a client's that trusts it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    day = datetime.timedelta(days=1)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - day)
                   .not_valid_after(now + day)
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert_path, key_path)
    client = ssl.create_default_context(cafile=str(cert_path))
    return server, client


async def test_a_connection_idle_past_its_keepalive_is_closed_by_the_next_release() -> None:
    async with serving(answer(OK)) as (_, url), serving(answer(OK)) as (_, elsewhere):
        transport = Http1Transport(4, keepalive_s=0.05)
        await fetch(transport, url)
        (first,) = transport.idle[origin_of(url)]
        await asyncio.sleep(0.1)  # past its keep-alive
        await fetch(transport, elsewhere)
        assert first.closed and transport.idle[origin_of(url)] == []
        assert len(transport.idle[origin_of(elsewhere)]) == 1  # the one just released stays
        await transport.aclose()
