"""Whether an address stays on this machine: one test for the gateway's bind address, the kind a new
endpoint gets, and the callers' "a local runtime needs no key"."""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})


def is_loopback_host(host: str) -> bool:
    """A host name or IP literal (brackets around IPv6 allowed)."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@lru_cache(maxsize=1024)
def is_loopback(base: str) -> bool:
    """An endpoint's base URL, e.g. a local runtime (ollama, llama.cpp) at http://127.0.0.1:11434/v1."""
    return is_loopback_host(urlsplit(base).hostname or "")
