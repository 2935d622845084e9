"""The HTTP client every `bench` command uses: one place decides which secret goes to which route and
turns the server's answer (or its silence) into a reply or a `CliError`.

The transport is injectable so tests can answer in-process (`httpx.MockTransport`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import httpx

from cli.errors import Refused, Unreachable

ADMIN_PREFIXES = ("/api/",)
GATEWAY_PREFIXES = ("/v1/", "/bench/")
# How a server says it has no such route: our gateway's words (SPEC CLI-4), or a bare framework 404/405.
MISSING_ROUTE_WORDS = ("unknown endpoint", "Not Found", "Method Not Allowed")
MISSING_ROUTE_PREFIX = "no route "


@dataclass(frozen=True)
class Reply:
    status: int
    text: str
    data: Any


def bearer_for(path: str, admin_token: str | None, key: str | None) -> str | None:
    """The admin token goes only to admin routes and the gateway key only to gateway routes (SPEC CLI-2)."""
    if path.startswith(ADMIN_PREFIXES):
        return admin_token or None
    if path.startswith(GATEWAY_PREFIXES):
        return key or None
    return None


def missing_secret_hint(path: str) -> str:
    if path.startswith(ADMIN_PREFIXES):
        return "the server wants an admin token: set BENCHWARMERS_ADMIN_TOKEN"
    return "the server wants a gateway key: set BENCHWARMERS_KEY"


def reasons(data: Any) -> list[str]:
    """The server's own words for a refusal, whatever shape it used."""
    if isinstance(data, dict):
        errors = data.get("errors")
        if isinstance(errors, list) and errors:
            return [str(e) for e in errors]
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return [str(error["message"])]
        if isinstance(error, str) and error:
            return [error]
        detail = data.get("detail")
        if isinstance(detail, str) and detail:
            return [detail]
        if isinstance(detail, list) and detail:
            return [str(d.get("msg", d)) if isinstance(d, dict) else str(d) for d in detail]
    return []


def is_missing_route(words: list[str]) -> bool:
    return not words or (
        len(words) == 1 and (words[0] in MISSING_ROUTE_WORDS or words[0].startswith(MISSING_ROUTE_PREFIX))
    )


@contextlib.contextmanager
def transport_errors(url: str, method: str, path: str) -> Iterator[None]:
    """Silence (no server: exit 3) and slowness (exit 1) in the client's words."""
    try:
        yield
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise Unreachable(f"no server answered at {url} ({type(exc).__name__})") from None
    except httpx.TimeoutException:
        raise Refused(f"{method} {path}: the server at {url} did not answer in time") from None
    except httpx.TransportError as exc:
        raise Unreachable(f"the connection to {url} failed: {type(exc).__name__}") from None


class BenchClient:
    def __init__(
        self,
        url: str,
        *,
        admin_token: str | None = None,
        key: str | None = None,
        timeout_s: float = 900.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url
        self._admin_token = admin_token
        self._key = key
        self._http = httpx.Client(
            base_url=url, timeout=httpx.Timeout(timeout_s, connect=5.0), transport=transport
        )

    def __enter__(self) -> BenchClient:
        return self

    def __exit__(self, *_: object) -> None:
        self._http.close()

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def post(self, path: str, body: dict[str, Any] | None = None) -> Reply:
        return self.request("POST", path, body if body is not None else {})

    def headers(self, path: str, accept: str = "application/json") -> dict[str, str]:
        headers = {"accept": accept}
        bearer = bearer_for(path, self._admin_token, self._key)
        if bearer:
            headers["authorization"] = f"Bearer {bearer}"
        return headers

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Reply:
        with transport_errors(self.url, method, path):
            resp = self._http.request(method, path, json=body, headers=self.headers(path))
        return self._reply(method, path, resp)

    def stream_lines(self, path: str, body: dict[str, Any] | None, method: str = "POST") -> Iterator[str]:
        """Ask and yield the reply's lines as they come (an SSE stream); a refusal raises like `request`."""
        headers = self.headers(path, "text/event-stream")
        with transport_errors(self.url, method, path):
            with self._http.stream(method, path, json=body, headers=headers) as resp:
                if resp.status_code != 200:
                    resp.read()
                    self._reply(method, path, resp)
                yield from resp.iter_lines()

    def download(self, path: str, into: IO[bytes]) -> None:
        """GET a binary reply (an archive) into `into` as it comes; a refusal raises like `request`."""
        with transport_errors(self.url, "GET", path):
            with self._http.stream("GET", path, headers=self.headers(path, "*/*")) as resp:
                if resp.status_code != 200:
                    resp.read()
                    self._reply("GET", path, resp)
                for data in resp.iter_bytes():
                    into.write(data)

    def _reply(self, method: str, path: str, resp: httpx.Response) -> Reply:
        text = resp.text
        try:
            data = json.loads(text) if text else None
        except ValueError:
            data = None
        words = reasons(data)
        raw = text if data is not None else None
        if resp.status_code < 400 and data is not None:
            if isinstance(data, dict) and data.get("ok") is False:
                raise Refused(*(words or [f"{method} {path} was refused"]), raw=raw)
            return Reply(resp.status_code, text, data)
        if resp.status_code == 401:
            raise Refused(*(words or ["unauthorized"]), missing_secret_hint(path), raw=raw)
        # A route the server lacks, or some other page answering in HTML where JSON was expected.
        if resp.status_code < 400 or (resp.status_code in (404, 405) and is_missing_route(words)):
            raise Refused(f"the server at {self.url} is older than this bench: it has no {method} {path}")
        raise Refused(*(words or [f"{method} {path} failed with HTTP {resp.status_code}"]), raw=raw)
