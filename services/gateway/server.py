"""Serve the gateway's app on `BENCH_BIND:BENCH_PORT` (default 127.0.0.1:8122) with the surfaces given,
refusing to listen unguarded (SEC-1) and draining on a stop signal."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import FrameType

import uvicorn

from services.gateway.allow import startup_problems
from services.gateway.app import create_app
from services.gateway.http_protocol import GatewayHttpProtocol
from shared.logging import setup_logging
from shared.runtime import login_or_exit
from shared.settings import GatewaySettings, settings_or_exit
from shared.surface import Surface


def serve(surfaces: Sequence[Surface] = ()) -> None:
    settings = settings_or_exit(GatewaySettings, "gateway")
    setup_logging("gateway", settings.log_level)
    problems = startup_problems(settings)  # SEC-1: refuse to listen unguarded
    if problems:
        for problem in problems:
            print(f"gateway: {problem}", file=sys.stderr)
        raise SystemExit(2)
    login = login_or_exit("gateway", settings)
    app = create_app(settings, login, surfaces=surfaces)
    server = uvicorn.Server(uvicorn.Config(
        app, host=settings.bind, port=settings.port, access_log=False, log_config=None,
        timeout_graceful_shutdown=max(1, round(settings.drain_s)), lifespan="on",
        http=GatewayHttpProtocol,  # a reply's head leaves with its first bytes of body
    ))
    stop_serving = server.handle_exit

    def draining(sig: int, frame: FrameType | None) -> None:
        """The ops port's /readyz turns 503 the moment a stop signal arrives, while requests drain."""
        app.state.draining = True
        stop_serving(sig, frame)

    server.handle_exit = draining  # type: ignore[method-assign]
    server.run()
