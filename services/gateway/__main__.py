# ruff: noqa: E402
"""`python -m services.gateway`: the gateway alone (the model APIs, `/bench/*`, MCP), without the console;
`python -m services gateway console` serves both in one process."""

from __future__ import annotations

from shared.lean import leave_out

leave_out("rich", "aiohttp")  # before anything imports them (shared/lean.py)
# isort: split

from services.gateway.server import serve

if __name__ == "__main__":
    serve()
