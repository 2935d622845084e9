"""A key goes only where its endpoint says: a call or a listing names a base, but a caller sends an
endpoint's key only to the base saved for that endpoint in its own config fold. Anyone who can publish on
the bus could otherwise name a listener of theirs and an endpoint, and be sent that endpoint's key.

The checks are pure; `Refusals` counts and logs what this process refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import structlog

from services.caller.outcome import client_failed
from shared.config_state import ConfigState

log = structlog.get_logger("caller")

REFUSED = "refused: base "
SHOWN = 200  # of a name or URL taken from a message, in an error text or a log line
DEFAULT_PORTS = {"http": 80, "https": 443}


def same_base(named: str, saved: str) -> bool:
    """Normalised trivially: a trailing "/" does not make another base."""
    return named.rstrip("/") == saved.rstrip("/")


def origin(url: str) -> tuple[str, str, int] | None:
    """Where a request to `url` goes: scheme, host and port (None when the port does not parse)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or DEFAULT_PORTS.get(scheme, 0)
    except ValueError:
        return None
    return scheme, (parts.hostname or "").lower(), port


def not_its_base(endpoint: str, base: str) -> str:
    return f"{REFUSED}{base[:SHOWN]} is not endpoint {endpoint[:SHOWN]}'s saved base"


def base_refusal(state: ConfigState, endpoint: str, base: str) -> str | None:
    """Why a call naming `base` for `endpoint` is not sent; None when it is the saved base. An endpoint not
    saved has no base its key may go to (the caller waits for the call's config position, so a call built on
    a saved endpoint finds it saved)."""
    saved = state.endpoints.get(endpoint)
    if saved is not None and same_base(base, saved.base):
        return None
    return not_its_base(endpoint, base)


def listing_refusal(state: ConfigState, endpoint: str, base: str, models_url: str = "") -> str | None:
    """A saved endpoint's models are listed only at its saved base (a `models_url` only on its origin).
    An endpoint not saved yet is listed where asked: that is how a new endpoint is checked before it is saved
    (and only the gateway may ask)."""
    saved = state.endpoints.get(endpoint)
    if saved is None:
        return None
    if not same_base(base, saved.base):
        return not_its_base(endpoint, base)
    if models_url:
        where = origin(models_url)
        if where is None or where != origin(saved.base):
            return f"refused: models_url {models_url[:SHOWN]} is not on endpoint {endpoint[:SHOWN]}'s base"
    return None


def is_base_refusal(error: str) -> bool:
    """Whether a call's error is this refusal (nothing was sent; its text holds a base from the message, so
    it must teach nothing about limits)."""
    return error.startswith(client_failed(REFUSED).error)


@dataclass
class Refusals:
    """The refusals of this process, each logged once with the running count."""

    count: int = 0

    def note(self, endpoint: str, base: str, what: str) -> None:
        self.count += 1
        log.warning("base_refused", endpoint=endpoint[:SHOWN], base=base[:SHOWN], what=what,
                    refusals=self.count)


REFUSALS = Refusals()  # one per process: seats, route calls and listings together
