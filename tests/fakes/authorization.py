"""A local fake of OpenRouter's PKCE sign-in for tests: `/auth` plays the user who approves (it redirects
the browser to `callback_url` with a fresh code, remembering the S256 challenge), and `/api/v1/auth/keys`
trades a code for a key only with the verifier whose SHA-256 is that challenge, once."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit


class FakeAuthorization:
    def __init__(self, key: str) -> None:
        self.key = key
        self.challenges: dict[str, str] = {}  # code → challenge
        self.exchanges: list[dict[str, str]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeAuthorization:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                if parts.path != "/auth" or query.get("code_challenge_method") != "S256":
                    self.send_error(400)
                    return
                code = secrets.token_hex(8)
                fake.challenges[code] = query["code_challenge"]
                self.send_response(302)
                self.send_header("Location", f"{query['callback_url']}?{urlencode({'code': code})}")
                self.end_headers()

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.exchanges.append(body)
                challenge = fake.challenges.pop(body.get("code", ""), None)
                digest = hashlib.sha256(str(body.get("code_verifier", "")).encode()).digest()
                ok = self.path == "/api/v1/auth/keys" and challenge is not None and challenge == (
                    base64.urlsafe_b64encode(digest).decode().rstrip("="))
                reply = json.dumps({"key": fake.key} if ok else {"error": "invalid code"}).encode()
                self.send_response(200 if ok else 403)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler
