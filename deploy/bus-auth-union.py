#!/usr/bin/env python3
"""Join auth.conf files made by `bench bus credentials` into one that accepts every key in any of them.

For a rotation without a gap: NATS must accept a role's old key (its running pods) and its new key (the
pods that replace them) until the old pods are gone. A later file wins for a key in several files.

    python3 deploy/bus-auth-union.py deploy/bus/auth.conf.old deploy/bus/auth.conf > deploy/bus/overlap.conf

Standard library only: it runs wherever the auth files are, with no project install.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PREFIX = "authorization:"


def users(path: Path) -> list[dict[str, object]]:
    text = path.read_text()
    if not text.startswith(PREFIX):
        raise SystemExit(f"{path}: not an auth.conf made by `bench bus credentials` (no '{PREFIX}' first)")
    block = json.loads(text[len(PREFIX):])
    found: list[dict[str, object]] = block["users"]
    return found


def union(paths: list[Path]) -> str:
    by_key: dict[str, dict[str, object]] = {}
    for path in paths:
        for user in users(path):
            by_key[str(user["nkey"])] = user
    return PREFIX + " " + json.dumps({"users": list(by_key.values())}, indent=2) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sys.stdout.write(union([Path(arg) for arg in argv]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
