"""`bench up`: the whole stack on this machine, in the foreground, until Ctrl-C or SIGTERM; `bench down`.

`bench up` reads its settings here, then becomes `cli/supervisor.py` (exec, same PID): the process that
tends the stack for hours needs none of the rest of the CLI."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from cli import data_lock
from cli.errors import CliError
from cli.output import say
from cli.settings import UpSettings, up_settings

DOWN_WAIT_S = 60.0


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting for its parent to reap it (Linux says so in /proc)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def up() -> None:
    """Run NATS, the five services and a second seater here, in the foreground; Ctrl-C stops them all.

    Data lives in BENCHWARMERS_HOME (default: your user data folder), and one bench up at a time
    serves it; the gateway listens on 127.0.0.1:8122 (BENCH_PORT changes the port); BENCH_SEATERS sets
    how many seaters run (2); NATS_URL uses an existing NATS instead of the embedded one. A service
    that dies, NATS included, is reported here and started again (after a growing pause if it keeps
    dying). The services end with bench up however it ends, kill -9 included. A bad setting stops it
    before anything starts, with one line naming the variable. On Linux every service but the callers is
    forked from one process that has imported what they share, which saves memory
    (BENCH_FORK_SERVICES=false starts each in an interpreter of its own).

    Example:

    \b
      BENCH_PORT=8200 bench up
    """
    try:
        up_settings()  # a bad setting is refused here, before the lean process even starts
    except ValueError as exc:
        raise CliError(str(exc)) from None
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "cli.supervisor"])  # same PID: the lock, `bench down`


def down() -> None:
    """Stop the stack `bench up` runs for this data folder (BENCHWARMERS_HOME), as Ctrl-C would.

    Example:

    \b
      bench down
    """
    settings = UpSettings()
    running = data_lock.holder(settings.home)
    if running is None:
        raise CliError(f"no bench up is running for {settings.home}")
    if running.pid is None:
        raise CliError(f"{running}; try again in a moment")
    pid = running.pid
    os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + DOWN_WAIT_S
    while alive(pid):
        if time.monotonic() > end:
            raise CliError(f"bench up (pid {pid}) did not stop within {DOWN_WAIT_S:g}s")
        time.sleep(0.1)
    say("stopped.")
