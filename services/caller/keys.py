"""Provider keys: the caller is the only process that reads them (from its environment or a mounted secret).

`BENCHWARMERS_KEY_<NAME>` (endpoint name upper-cased, `-` → `_`) wins; else `BENCH_SECRETS_PATH`: a
directory with one file per key (as a Kubernetes Secret mounts), or one `.env` / JSON file of them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from shared.provider_keys import key_variable, parse_secrets_file


def missing_key(endpoint: str) -> str:
    """Why a call was not sent: names the variable to set, never a value."""
    return f"missing key: set {key_variable(endpoint)}"


@dataclass(frozen=True)
class KeyStore:
    """Looks a key up on every call, so a rotated Secret is picked up without a restart."""

    env: Mapping[str, str]
    secrets_path: Path | None = None

    @classmethod
    def from_environment(cls, secrets_path: Path | None = None) -> KeyStore:
        return cls(env=os.environ, secrets_path=secrets_path)

    def key_for(self, endpoint: str) -> str | None:
        names = (key_variable(endpoint), endpoint)
        value = self.env.get(names[0])
        if value:
            return value.strip()
        return self._from_secrets(names)

    def _from_secrets(self, names: tuple[str, ...]) -> str | None:
        path = self.secrets_path
        if path is None or not path.exists():
            return None
        if path.is_dir():
            for name in names:
                candidate = path / name
                if candidate.is_file():
                    return candidate.read_text().strip() or None
            return None
        pairs = parse_secrets_file(path.read_text())
        return next((pairs[n] for n in names if pairs.get(n)), None)
