"""One `bench up` per data folder: an exclusive `flock` on `<home>/bench-up.pid`, a file that holds its PID.

The kernel drops the lock when the process ends, however it ends (`kill -9` included), so a file left behind
never blocks the next start, and a PID the system has since given to another program is never taken for a
running stack. `bench down` finds the process to stop by the same file.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

LOCK_FILE = "bench-up.pid"
# `bench down` may hold a shared lock for a moment to read the file: try a few times.
TRIES, TRY_EVERY_S = 5, 0.05


class InUse(Exception):
    """Another `bench up` holds the folder; `pid` is None while it has not written it yet."""

    def __init__(self, home: Path, pid: int | None) -> None:
        super().__init__(home, pid)
        self.home, self.pid = home, pid

    def __str__(self) -> str:
        if self.pid is None:
            return f"another bench up is starting for {self.home}"
        return (f"bench up (pid {self.pid}) is already running for {self.home}; "
                f"`bench down` (or `kill {self.pid}`) stops it")


def _pid_in(fd: int) -> int | None:
    try:
        return int(os.pread(fd, 32, 0).decode().strip())
    except ValueError:
        return None


@contextlib.contextmanager
def held(home: Path) -> Iterator[None]:
    """Hold the folder for this process, or raise `InUse` naming the process that does."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / LOCK_FILE
    tries = TRIES
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _pid_in(fd)
            os.close(fd)
            tries -= 1
            if not tries:
                raise InUse(home, pid) from None
            time.sleep(TRY_EVERY_S)
            continue
        # A `bench up` that was stopping may have removed the file we opened: lock the one now in place.
        with contextlib.suppress(FileNotFoundError):
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)


def holder(home: Path) -> InUse | None:
    """Who holds the folder (`InUse`), or None when no `bench up` runs for it."""
    try:
        fd = os.open(home / LOCK_FILE, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return InUse(home, _pid_in(fd))
    else:
        return None
    finally:
        os.close(fd)
