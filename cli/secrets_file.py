"""The data folder's secrets file: provider keys typed at `bench endpoint add --key-stdin` or got by a
sign-in (`bench endpoint connect`), read by the callers alone (`bench up` hands its path to them as
`BENCH_SECRETS_PATH`, and to no other service).

The file is `<data folder>/secrets.env` (or the `BENCH_SECRETS_PATH` already set, a file or a folder of
one file per key as a mounted secret is). It is written whole, to a temporary file made with mode 0600 in
the same folder and renamed over the old one, so a reader sees the old keys or the new ones, never half a
file, and the key is never readable by another user, not even for a moment. Keys are never printed.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from shared.provider_keys import key_variable, parse_secrets_file

FILE_NAME = "secrets.env"
SECRETS_ENV = "BENCH_SECRETS_PATH"
MAX_KEY = 4096


class BadKey(ValueError):
    """A key that cannot be stored; the message never holds the key."""


def secrets_path(home: Path, env: Mapping[str, str] | None = None) -> Path:
    """Where the callers of this data folder read keys: `BENCH_SECRETS_PATH` when set, else the data folder's
    `secrets.env`."""
    named = (env if env is not None else os.environ).get(SECRETS_ENV)
    return Path(named).expanduser() if named else home / FILE_NAME


def checked(key: str) -> str:
    key = key.strip()
    if not key:
        raise BadKey("no key given")
    if len(key) > MAX_KEY or any(c.isspace() or not c.isprintable() for c in key):
        raise BadKey(f"a key is one line of at most {MAX_KEY} printable characters without spaces")
    return key


def write_private(path: Path, data: bytes) -> None:
    """Atomically replace `path` with `data`, mode 0600 from its first byte."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def render(pairs: Mapping[str, str], as_json: bool) -> bytes:
    if as_json:
        return (json.dumps(dict(pairs), indent=2, sort_keys=True) + "\n").encode()
    lines = ["# Provider keys for the callers (bench endpoint add --key-stdin, bench endpoint connect)."]
    lines += [f"{name}={value}" for name, value in sorted(pairs.items())]
    return ("\n".join(lines) + "\n").encode()


@dataclass(frozen=True)
class Saved:
    """What was there before a store, so a failed add can put it back."""

    path: Path
    before: bytes | None


def store_key(path: Path, endpoint: str, key: str) -> Saved:
    """Set the endpoint's key (`BENCHWARMERS_KEY_<NAME>`) in the secrets file or folder."""
    key, name = checked(key), key_variable(endpoint)
    target = path / name if path.is_dir() else path
    before = target.read_bytes() if target.exists() else None
    if path.is_dir():
        write_private(target, (key + "\n").encode())
        return Saved(target, before)
    text = before.decode() if before else ""
    pairs = parse_secrets_file(text)
    pairs[name] = key
    write_private(target, render(pairs, text.lstrip().startswith("{")))
    return Saved(target, before)


def restore(saved: Saved) -> None:
    """Put the secrets back as they were before `store_key`."""
    if saved.before is None:
        with contextlib.suppress(FileNotFoundError):
            saved.path.unlink()
    else:
        write_private(saved.path, saved.before)
