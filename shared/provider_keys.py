"""Where a provider key is read from (SPEC C-2): the callers read it, the gateway and the CLI name the
variable in their answers, so the naming rule lives here once."""

from __future__ import annotations

KEY_PREFIX = "BENCHWARMERS_KEY_"


def key_variable(endpoint: str) -> str:
    """The environment variable holding an endpoint's key: its name upper-cased, `-` → `_`."""
    return KEY_PREFIX + endpoint.upper().replace("-", "_")
