"""`python -m services.gateway`: serve the gateway on `BENCH_BIND:BENCH_PORT` (default 127.0.0.1:8122)."""

from __future__ import annotations

import uvicorn

from services.gateway.app import create_app
from shared.logging import setup_logging
from shared.settings import GatewaySettings


def main() -> None:
    settings = GatewaySettings()
    setup_logging("gateway", settings.log_level)
    uvicorn.run(
        create_app(settings), host=settings.bind, port=settings.port, access_log=False, log_config=None,
        timeout_graceful_shutdown=5, lifespan="on",
    )


if __name__ == "__main__":
    main()
