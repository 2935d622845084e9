"""The refusal every step of a request may raise: the HTTP status and the message the client reads. Each
HTTP surface renders it in its own error shape (a format's on the model APIs, `{"ok": false, ...}` on the
admin API)."""

from __future__ import annotations


class Refusal(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
