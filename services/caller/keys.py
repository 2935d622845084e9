"""Provider keys: the caller is the only process that reads them (from its environment or a mounted secret).

`BENCHWARMERS_KEY_<NAME>` (endpoint name upper-cased, `-` → `_`) wins; else `BENCH_SECRETS_PATH`: a
directory with one file per key (as a Kubernetes Secret mounts), or one `.env` / JSON file of them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from shared.provider_keys import key_variable, parse_secrets_file


def missing_key(endpoint: str) -> str:
    """Why a call was not sent: names the variable to set, never a value."""
    return f"missing key: set {key_variable(endpoint)}"


RECHECK_S = 1.0
Signature = tuple[int, int, int] | None  # the secrets path's modification time, size and inode


@dataclass
class KeyStore:
    """Looks a key up again when the secrets path changed (a key file added or rewritten, a Kubernetes
    Secret's new version swapped in), and at least once a second (`recheck_s`, for a file rewritten in
    place in a directory): a rotated key is picked up without a restart, and a call does not read and
    parse the secrets on its way to the provider, only stat their path."""

    env: Mapping[str, str]
    secrets_path: Path | None = None
    recheck_s: float = RECHECK_S
    clock: Callable[[], float] = time.monotonic
    _known: dict[str, tuple[float, Signature, str | None]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_environment(cls, secrets_path: Path | None = None) -> KeyStore:
        return cls(env=os.environ, secrets_path=secrets_path)

    def key_for(self, endpoint: str) -> str | None:
        now, signature = self.clock(), self._signature()
        known = self._known.get(endpoint)
        if known is not None and now - known[0] < self.recheck_s and known[1] == signature:
            return known[2]
        key = self._look_up(endpoint)
        self._known[endpoint] = (now, signature, key)
        return key

    def _signature(self) -> Signature:
        if self.secrets_path is None:
            return None
        try:
            stat = self.secrets_path.stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size, stat.st_ino

    def _look_up(self, endpoint: str) -> str | None:
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
