"""`python -m services.gateway`: serve the gateway on `BENCH_BIND:BENCH_PORT` (default 127.0.0.1:8122)."""

from __future__ import annotations

import sys

import uvicorn

from services.gateway.allow import startup_problems
from services.gateway.app import create_app
from shared.logging import setup_logging
from shared.runtime import login_or_exit
from shared.settings import GatewaySettings, settings_or_exit


def main() -> None:
    settings = settings_or_exit(GatewaySettings, "gateway")
    setup_logging("gateway", settings.log_level)
    problems = startup_problems(settings)  # SEC-1: refuse to listen unguarded
    if problems:
        for problem in problems:
            print(f"gateway: {problem}", file=sys.stderr)
        raise SystemExit(2)
    login = login_or_exit("gateway", settings)
    uvicorn.run(
        create_app(settings, login), host=settings.bind, port=settings.port, access_log=False,
        log_config=None,
        timeout_graceful_shutdown=max(1, round(settings.drain_s)), lifespan="on",
    )


if __name__ == "__main__":
    main()
