"""Optional imports a service process never uses, left out before anything imports them.

`rich` is structlog's pretty console (our logs are JSON lines) and `aiohttp` is nats-py's WebSocket
transport (the bus is TCP or TLS); both libraries import them only if they can, and each costs a service
about 4 and 7 MB of memory. Called first thing in `python -m services.<name>` only (and in `bench up`'s
zygote, before the services are forked from it), never by a library module, so tests and the CLI keep both.
"""

from __future__ import annotations

import sys


def leave_out(*names: str) -> None:
    """`import <name>` raises ImportError from now on in this process, unless it is imported already."""
    for name in names:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
