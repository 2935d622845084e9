"""`GET /health`: the one route open to every Host and caller (H-D1), for probes and the stack."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response


async def health(request: Request) -> Response:
    return JSONResponse({"ok": True})
