"""NATS credentials: one nkey per role, made once for a folder and reused, and the login a process uses.

NATS's own mechanism: the server holds only public keys (in its `authorization` block, see
`shared.bus_access`); each process signs the server's nonce with its role's seed, which never crosses
the wire. A folder holds `<role>.nk` seed files (mode 0600, folder 0700): `bench up` makes one beside its
data, `bench bus credentials` makes one for docker-compose and Kubernetes Secrets.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import nacl.signing
import nkeys

from shared import bus_access

SEED_SUFFIX = ".nk"
# A rotated role's previous seed, kept (and still accepted by the server) until its processes turned over.
PREVIOUS_SUFFIX = ".nk.previous"
AUTH_CONF = "auth.conf"
CREDENTIALS_ENV = "BENCH_NATS_CREDENTIALS"


class CredentialsError(Exception):
    """A process cannot log in to the bus; the message names what is missing and where it is read from."""


def seed_path(folder: Path, role: str) -> Path:
    return folder / f"{role}{SEED_SUFFIX}"


def previous_path(folder: Path, role: str) -> Path:
    return folder / f"{role}{PREVIOUS_SUFFIX}"


def new_seed() -> bytes:
    """A fresh user nkey seed (`SU…`), from 32 random bytes."""
    raw = bytes(nacl.signing.SigningKey.generate())
    seed: bytes = nkeys.encode_seed(raw, nkeys.PREFIX_BYTE_USER)
    return seed


def public_key(seed: bytes) -> str:
    key: bytes = nkeys.from_seed(bytearray(seed)).public_key
    return key.decode()


def _write_private(path: Path, data: bytes) -> None:
    """Create `path` readable by its owner alone; an existing file is never overwritten (made once)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data + b"\n")


def ensure(folder: Path, roles: tuple[str, ...] = bus_access.ROLES) -> dict[str, str]:
    """Make the seeds that are missing in `folder` and return every role's public key."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    keys: dict[str, str] = {}
    for role in roles:
        path = seed_path(folder, role)
        if not path.exists():
            try:
                _write_private(path, new_seed())
            except FileExistsError:  # another process made it first: use theirs
                pass
        keys[role] = public_key(read_seed(path, role))
    return keys


def server_authorization(folder: Path) -> dict[str, object]:
    """The `authorization` block for the seeds in `folder` (made where missing), with each rotated role's
    previous key beside its new one until that previous seed is deleted."""
    keys: dict[str, tuple[str, ...]] = {role: (key,) for role, key in ensure(folder).items()}
    for role in bus_access.ROLES:
        previous = previous_path(folder, role)
        if previous.exists():
            keys[role] += (public_key(read_seed(previous, role)),)
    return bus_access.authorization(keys)


def rotate(folder: Path, role: str) -> Path:
    """Give `role` a new seed and keep its current one as the previous (both accepted by the server until the
    previous file is deleted); returns the previous seed's path."""
    current, previous = seed_path(folder, role), previous_path(folder, role)
    if previous.exists():
        raise CredentialsError(f"{role} is already being rotated: delete {previous} once its processes run "
                               f"with the new seed, then rotate again")
    read_seed(current, role)
    current.rename(previous)
    ensure(folder, roles=(role,))
    return previous


def write_auth_conf(folder: Path, out: Path) -> Path:
    """nats-server's `authorization { … }` as a file to `include` (JSON is valid NATS config)."""
    text = "authorization: " + json.dumps(server_authorization(folder), indent=2) + "\n"
    out.write_text(text)
    out.chmod(0o600)
    return out


def read_seed(path: Path, role: str) -> bytes:
    try:
        seed = path.read_bytes().strip()
    except FileNotFoundError:
        raise CredentialsError(
            f"no NATS credentials for {role}: {path} does not exist (read from {CREDENTIALS_ENV}, default "
            f"$BENCHWARMERS_HOME/bus; `bench bus credentials` makes them)"
        ) from None
    except OSError as exc:
        raise CredentialsError(f"cannot read NATS credentials for {role} at {path}: {exc.strerror}") from None
    if not valid_user_seed(seed):
        raise CredentialsError(f"{path} holds no valid NATS nkey seed for {role} (expected one line SU…)")
    return seed


def valid_user_seed(seed: bytes) -> bool:
    if not seed.startswith(b"SU"):
        return False
    try:
        public_key(seed)
    except Exception:
        return False
    return True


@dataclass(frozen=True)
class BusLogin:
    """How one process logs in: its role, its seed, and the CA that vouches for the server when TLS is on."""

    role: str
    seed: bytes
    tls_ca: Path | None = None

    @classmethod
    def load(cls, folder: Path, role: str, tls_ca: Path | None = None) -> BusLogin:
        if tls_ca is not None and not tls_ca.is_file():
            raise CredentialsError(
                f"no CA certificate for NATS TLS: {tls_ca} does not exist (read from BENCH_NATS_TLS_CA)"
            )
        return cls(role, read_seed(seed_path(folder, role), role), tls_ca)

    def __repr__(self) -> str:  # the seed never reaches a log line or a traceback's locals
        return f"BusLogin(role={self.role!r}, tls_ca={self.tls_ca!r})"
