"""Sign-in with OpenRouter's PKCE flow (SPEC H-D1 `/connect/callback`), run by the CLI on the user's
machine so the key it yields goes straight to the data folder's secrets file and never through the
gateway (invariant 5: keys reach the callers only).

The flow: a random verifier and its S256 challenge; the browser goes to the provider's `/auth` page with
a loopback `callback_url` (`http://localhost:<port>/connect/callback/<nonce>`, the nonce so only the
redirect this sign-in asked for is taken); the provider sends the browser back with `?code=`; the code
and the verifier are exchanged for a key (`POST …/auth/keys`). The callback page says only whether it
worked (`Cache-Control: no-store`, `Referrer-Policy: no-referrer`).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

OPENROUTER_AUTH = "https://openrouter.ai/auth"
OPENROUTER_KEYS = "https://openrouter.ai/api/v1/auth/keys"
OPENROUTER_BASE = "https://openrouter.ai/api/v1"
CALLBACK_PATH = "/connect/callback"
PAGE_HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
                "Content-Type": "text/html; charset=utf-8"}


class SignInFailed(RuntimeError):
    """The sign-in did not give a key; the message never holds a code or a key."""


def verifier() -> str:
    """RFC 7636: 43-128 characters of [A-Za-z0-9-._~]; 64 random bytes, base64url."""
    return secrets.token_urlsafe(64)[:96]


def challenge(code_verifier: str) -> str:
    digest = hashlib.sha256(code_verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def auth_url(auth: str, callback: str, code_challenge: str) -> str:
    query = urlencode({"callback_url": callback, "code_challenge": code_challenge,
                       "code_challenge_method": "S256"})
    return f"{auth}?{query}"


@dataclass
class Callback:
    """The loopback server's catch: the code, or why there is none."""

    nonce: str
    code: str = ""
    error: str = ""
    done: threading.Event = field(default_factory=threading.Event)

    def take(self, path: str) -> tuple[int, str]:
        """The page for a request to `path`; sets the code when it is the callback this sign-in awaits."""
        parts = urlsplit(path)
        if parts.path != f"{CALLBACK_PATH}/{self.nonce}":
            return 404, "Not the sign-in this bench is waiting for."
        query = parse_qs(parts.query)
        code = (query.get("code") or [""])[0]
        if not code:
            self.error = (query.get("error") or ["the provider sent no code"])[0][:200]
            self.done.set()
            return 400, "Sign-in failed: no code came back. You can close this tab."
        self.code = code
        self.done.set()
        return 200, "Signed in: the bench has your key now. You can close this tab."


def loopback_server(callback: Callback, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, text = callback.take(self.path)
            body = f"<!doctype html><title>bench sign-in</title><p>{text}</p>".encode()
            self.send_response(status)
            for name, value in PAGE_HEADERS.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # the query holds the code: never logged
            pass

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def exchange(keys_url: str, code: str, code_verifier: str, client: httpx.Client) -> str:
    """The key for `code`; a refusal is named by its status only (its body might echo the code)."""
    try:
        resp = client.post(keys_url, json={"code": code, "code_verifier": code_verifier,
                                           "code_challenge_method": "S256"}, timeout=30)
    except httpx.HTTPError as exc:
        raise SignInFailed(f"the key exchange failed: {type(exc).__name__}") from None
    if resp.status_code != 200:
        raise SignInFailed(f"the key exchange was refused (HTTP {resp.status_code})")
    try:
        key = resp.json().get("key")
    except ValueError:
        key = None
    if not isinstance(key, str) or not key:
        raise SignInFailed("the key exchange answered without a key")
    return key


def sign_in(auth: str, keys_url: str, port: int, show: Callable[[str], None], timeout_s: float,
            client: httpx.Client) -> str:
    """Run the flow: `show` gets the URL to open (printed, and opened in a browser by the caller); the key."""
    code_verifier, nonce = verifier(), secrets.token_hex(8)
    catch = Callback(nonce)
    try:
        server = loopback_server(catch, port)
    except OSError as exc:
        raise SignInFailed(f"port {port} on this machine is taken ({exc.strerror}); pick another: --port"
                           ) from None
    thread = threading.Thread(target=server.serve_forever, name="sign-in-callback", daemon=True)
    thread.start()
    try:
        callback = f"http://localhost:{server.server_address[1]}{CALLBACK_PATH}/{nonce}"
        show(auth_url(auth, callback, challenge(code_verifier)))
        if not catch.done.wait(timeout_s):
            raise SignInFailed(f"no sign-in came back within {timeout_s:g}s")
    finally:
        server.shutdown()
        server.server_close()
    if not catch.code:
        raise SignInFailed(f"the provider said: {catch.error}")
    return exchange(keys_url, catch.code, code_verifier, client)
