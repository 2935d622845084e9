"""A local HTTP server serving catalog feed documents, each path told how to behave: answer with a
document, an HTTP error, too slowly, or more bytes than asked for. Runs in a thread of its own."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    body: bytes = b""
    status: int = 200
    delay_s: float = 0.0  # before the first byte
    declare_length: bool = True


class FeedServer:
    def __init__(self) -> None:
        self.replies: dict[str, Reply] = {}
        self.hits: list[str] = []
        self.headers: list[dict[str, str]] = []  # each request's headers, names lower-cased
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.hits.append(self.path)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = server.replies.get(self.path, Reply(status=404))
                time.sleep(reply.delay_s)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    if reply.declare_length:
                        self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def start(self) -> FeedServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
