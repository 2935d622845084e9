"""A-81 with the real `bench` executable: BENCHWARMERS_ADMIN_TOKEN reaches admin routes only and
BENCHWARMERS_KEY gateway routes only, whatever the command. The server here records what it was sent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

BENCH = Path(sys.executable).with_name("bench")
TOKEN = "admin-token-0123456789"
KEY = "bwk_" + "k" * 43
REPLIES = {
    "/api/status": {"ok": True, "version": "x"},
    "/api/models": {"ok": True, "models": [], "renamed": {}},
    "/v1/models": {"object": "list", "data": []},
    "/bench/verdict": {"ok": True, "recorded": {}},
    "/bench/pending": {"pending": []},
    "/api/gateway-key": {"ok": True, "key": KEY},
}


class Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str, str | None]]] = []

    def answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        path = self.path.split("?")[0]
        self.seen.append((path, self.headers.get("authorization")))
        body = json.dumps(REPLIES.get(path, {"ok": True})).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    Recorder.seen = []
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a81_each_secret_goes_only_to_its_own_routes(server: str) -> None:
    env = {
        **os.environ,
        "BENCHWARMERS_URL": server,
        "BENCHWARMERS_ADMIN_TOKEN": TOKEN,
        "BENCHWARMERS_KEY": KEY,
    }
    for args in (
        ["status"],
        ["models"],
        ["collections"],
        ["verdict", "p.member1", "--useful"],
        ["pending", "p.member1"],
        ["key", "create", "x"],
    ):
        done = subprocess.run(
            [str(BENCH), *args], env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
        assert done.returncode == 0, (args, done.stderr)
    sent = dict(Recorder.seen)
    assert sent == {
        "/api/status": f"Bearer {TOKEN}",
        "/api/models": f"Bearer {TOKEN}",
        "/api/gateway-key": f"Bearer {TOKEN}",
        "/v1/models": f"Bearer {KEY}",
        "/bench/verdict": f"Bearer {KEY}",
        "/bench/pending": f"Bearer {KEY}",
    }
