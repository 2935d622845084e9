"""Where a provider key is read from (SPEC C-2): the callers read it, the gateway and the CLI name the
variable in their answers, and the CLI writes the data folder's secrets file the callers read, so the naming
rule and the file's format live here once."""

from __future__ import annotations

import json

KEY_PREFIX = "BENCHWARMERS_KEY_"


def key_variable(endpoint: str) -> str:
    """The environment variable holding an endpoint's key: its name upper-cased, `-` → `_`."""
    return KEY_PREFIX + endpoint.upper().replace("-", "_")


def parse_dotenv(text: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, value = line.removeprefix("export ").split("=", 1)
        pairs[name.strip()] = value.strip().strip("'\"")
    return pairs


def parse_secrets_file(text: str) -> dict[str, str]:
    """A JSON object of names to keys, or `.env` lines."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        data = json.loads(stripped)
        return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}
    return parse_dotenv(text)
