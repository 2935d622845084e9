"""Installs the agent CLIs the real-agent tests drive, from the npm registry, into tests/agents/node_modules.

    python -m tests.agents.install        # `npm ci` here when node_modules is missing or stale

The versions are pinned in `package.json` and `package-lock.json` beside this file. The CLIs' native binaries
come as optional dependencies copied into place by the packages' install scripts, so those scripts must run
(`allowScripts` in package.json approves them for npm versions that ask). A stamp in node_modules holds the
digest of the two package files it was installed from: a changed pin makes it stale.

`npm ci` comes first. A registry that serves only this platform's binaries (as the one here does: opencode's
other platforms answer 404) cannot give a lock file listing every platform, and `npm ci` then refuses the lock
as out of sync; `npm install --no-save` installs the same pinned versions from it without rewriting it.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULES = HERE / "node_modules"
STAMP = MODULES / ".bench-installed"
PACKAGE_FILES = ("package.json", "package-lock.json")
BINARIES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "opencode": "opencode-ai"}
INSTALL_TIMEOUT_S = 1200.0


def node_missing() -> str | None:
    """Why the CLIs cannot be installed or run here, or None when node and npm are on PATH."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not found on PATH" if missing else None


def lock_digest() -> str:
    digest = hashlib.sha256()
    for name in PACKAGE_FILES:
        digest.update((HERE / name).read_bytes())
    return digest.hexdigest()


def binary(name: str) -> Path | None:
    """The installed CLI `name` (claude, codex, opencode), or None."""
    path = MODULES / ".bin" / name
    return path if path.exists() else None


def is_stale() -> bool:
    fresh = STAMP.exists() and STAMP.read_text().strip() == lock_digest()
    return not fresh or any(binary(name) is None for name in BINARIES)


def ensure_installed(timeout: float = INSTALL_TIMEOUT_S) -> str | None:
    """Install when missing or stale; returns why the CLIs are unavailable, or None when they are ready."""
    missing = node_missing()
    if missing:
        return missing
    if not is_stale():
        return None
    why = npm("ci", timeout=timeout)
    if why:
        why = npm("install", "--no-save", timeout=timeout)
    if why:
        return why
    absent = [name for name in BINARIES if binary(name) is None]
    if absent:
        return f"npm installed no {', '.join(absent)} binary in {MODULES}"
    STAMP.write_text(lock_digest() + "\n")
    return None


def npm(*args: str, timeout: float) -> str | None:
    """Run `npm <args>` here; returns why it failed, or None."""
    command = [shutil.which("npm") or "npm", *args, "--no-audit", "--no-fund"]
    shown = " ".join(["npm", *args])
    try:
        done = subprocess.run(command, cwd=HERE, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"{shown} in {HERE} did not finish within {timeout:.0f}s"
    if done.returncode != 0:
        return f"{shown} in {HERE} failed ({done.returncode}): {(done.stderr or done.stdout)[-1500:]}"
    return None


def main() -> int:
    started = time.monotonic()
    stale = node_missing() is None and is_stale()
    why = ensure_installed()
    if why:
        print(f"agent CLIs unavailable: {why}", file=sys.stderr)
        return 1
    action = "installed" if stale else "already installed"
    print(f"agent CLIs {action} in {time.monotonic() - started:.1f}s: "
          + ", ".join(f"{name} ({BINARIES[name]})" for name in BINARIES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
