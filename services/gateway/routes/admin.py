"""`GET /health`: the one route open to every Host and caller (H-D1), for probes and the stack.

The admin JSON API itself is in the `admin_*` route modules (`admin_api.ADMIN_ROUTERS`).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response


async def health(request: Request) -> Response:
    return JSONResponse({"ok": True})
