"""Child processes we own: started in their own session, waited on until ready, stopped by PID.

One place for the start/ready/stop dance that NATS, the stack's services and the test fakes all need, so
a child is never stopped by name and never left behind when it ignores SIGTERM. A supervisor's children can
be tied to its life (`die_with_parent`), so even a `kill -9` of it leaves no orphan.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


class Process(Protocol):
    """What the supervisor needs of a child: a `subprocess.Popen`, or a service the zygote forked."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


def die_with_us() -> Callable[[], None] | None:
    """A `preexec_fn` that has the kernel SIGKILL the child when the thread that forks it dies (Linux only).

    It runs in the forked child before `exec` and survives it, so it holds for the program that actually
    runs. libc is looked up here, before the fork. A parent that died between fork and `prctl` would never
    send the signal: the child sees it has been re-parented and leaves at once."""
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("spawn a child tied to its parent from the main thread: it dies with this one")
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def service_command(service: str) -> list[str]:
    """How the stack starts a service: the gateway through the composition root with the console beside it
    (one process, one port), every other service alone."""
    if service == "gateway":
        return [sys.executable, "-m", "services", "gateway", "console"]
    return [sys.executable, "-m", f"services.{service}"]


def spawn(cmd: Sequence[str], log_path: Path | None = None, env: Mapping[str, str] | None = None,
          cwd: Path | None = None, die_with_parent: bool = False) -> subprocess.Popen[bytes]:
    """Start `cmd` in its own session; stdout and stderr are appended to `log_path` (or discarded).

    `die_with_parent`: the child is killed when the calling thread ends (so call from the main thread)."""
    preexec = die_with_us() if die_with_parent else None
    if log_path is None:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env, cwd=cwd, start_new_session=True,
                                preexec_fn=preexec)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:  # the child gets its own copy of the descriptor
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=env, cwd=cwd, start_new_session=True, preexec_fn=preexec)


def wait_ready(proc: subprocess.Popen[bytes], ready: Callable[[], bool], timeout: float) -> bool:
    """Poll `ready` until it holds (True), the process exits or `timeout` passes (False).
    An `OSError` from `ready` (a port not listening yet) counts as not ready."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        with contextlib.suppress(OSError):
            if ready():
                return True
        time.sleep(0.05)
    return False


def send(proc: Process | None, sig: int) -> None:
    """Signal the process by its PID if it still runs."""
    if proc is not None and proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, sig)


def stop(proc: Process | None, timeout: float = 10.0) -> int | None:
    """SIGTERM, wait up to `timeout`, then SIGKILL and wait again. Returns the exit code when the
    process ended on its own or on SIGTERM, None when it had to be killed (or never started)."""
    if proc is None or proc.poll() is not None:
        return proc.returncode if proc is not None else None
    send(proc, signal.SIGTERM)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        kill(proc, timeout)
        return None


def kill(proc: Process | None, timeout: float = 10.0) -> None:
    """SIGKILL and wait for the process to be reaped."""
    if proc is not None and proc.poll() is None:
        send(proc, signal.SIGKILL)
        proc.wait(timeout)


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    """Until no process has `pid` or it is a zombie (not ours to reap): True, or False after `timeout`.
    Linux (`/proc`): it watches what the zygote forked, which only runs there."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[-1].split()[0] == "Z":
                    return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.02)
    return False
