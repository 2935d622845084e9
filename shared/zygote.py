"""A process that has imported what every service imports, and forks the services from that image.

Every Python service pays 35-50 MB for its interpreter and its imports (asyncio, pydantic, structlog,
nats-py, our shared package...), the same in every process. A service forked from a process that has already
imported them shares those pages copy-on-write until it writes to them, so the stack's memory (PSS: a page
shared by n processes counts 1/n in each) drops; each stays a process of its own, with its own PID, session,
environment, log and command line (`ps` shows `python -m services.ledger`, as if it had been started so).
The garbage collector's view of the imported objects is frozen before the first fork (`gc.freeze`), so a
collection in a service does not copy their pages.

`python -m shared.zygote` reads spawn requests from its stdin, a Unix datagram-sequence socket: one JSON
message each (`id`, `module`, `args`, `env`, `log`, and `private` when a descriptor comes with it), and
answers on stdout: `{"id", "pid"}` (or `{"id", "error"}`), then `{"exited", "code"}` when that process
ends (a code as `subprocess.Popen.returncode` gives it). `cli.forked` is the supervisor's side.

The callers are forked from it too, but their provider keys never pass through it: a caller's request
comes with the read end of a pipe the supervisor has already filled with them (`private`), and only the
forked child reads it, so the keys are never in the zygote's memory. A forked service is killed by the
kernel if the zygote dies (Linux's parent-death signal), and the zygote if the thread that started it dies,
as a supervised child is (`shared.processes`): a `kill -9` of the supervisor leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import runpy
import select
import signal
import socket
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import setproctitle

from shared import processes
from shared.lean import leave_out

# What every service imports, imported once before the first fork: the shared package and, through it,
# asyncio, uvloop, pydantic, pydantic-settings, structlog, nats-py and prometheus-client; and httpx and
# httptools, which every caller replica and the prober use. What one process alone uses (DuckDB for the
# ledger, FastAPI for the gateway) it imports itself: a page only one process reads gains nothing from being
# shared, and once that process writes it (a reference count) the zygote's copy is held beside its own.
PRELOADED = ("shared.runtime", "shared.settings", "shared.logging", "shared.events", "shared.commands",
             "shared.config_state", "shared.bus", "shared.rpc", "shared.ops", "httpx", "httptools")
# A request is one message on the socket; an environment of a few KB is far below this.
REQUEST_BYTES = 1 << 20


@dataclass(frozen=True)
class Job:
    """What a forked child runs: `python -m <module> <args...>` as it would, in this process."""

    module: str
    args: tuple[str, ...]


def preload() -> None:
    for name in PRELOADED:
        importlib.import_module(name)
    if threading.active_count() != 1:
        raise SystemExit(f"zygote: importing started threads ({threading.enumerate()}); forking is unsafe")
    gc.collect()
    gc.freeze()


def serve(requests: socket.socket, replies: IO[str]) -> Job:
    """Fork a child for each request read from the `requests` socket (this process's stdin) until it
    closes (then exit). Returns only in a forked child, with what it is to run."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so SIGCHLD writes to the wake-up pipe
    tie = processes.die_with_us()  # each child is tied to this process's life
    while True:
        ready, _, _ = select.select([requests.fileno(), wake_r], [], [])
        if wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_r, 512)
            reap(replies)
        if requests.fileno() not in ready:
            continue
        message, fds, _, _ = socket.recv_fds(requests, REQUEST_BYTES, 1)
        if not message and not fds:
            raise SystemExit(0)
        private = fds[0] if fds else None
        request = parse(message)
        if isinstance(request, str) or request[4] != (private is not None):
            said = request if isinstance(request, str) else "bad request: `private` and the pipe disagree"
            tell(replies, {"id": None if isinstance(request, str) else request[0], "error": said})
            if private is not None:
                os.close(private)
            continue
        ask, job, env, log, _ = request
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError as exc:  # out of processes or memory: this one is refused, the zygote goes on
            tell(replies, {"id": ask, "error": f"fork failed: {exc}"})
            pid = -1
        if pid == 0:
            requests.detach()  # its descriptor is stdin, which `become` points at /dev/null
            become(job, env, log, tie, (wake_r, wake_w), private)
            return job
        if private is not None:
            os.close(private)  # the child's copy is the only one left
        if pid > 0:
            tell(replies, {"id": ask, "pid": pid})


def parse(message: bytes) -> tuple[int, Job, dict[str, str], Path, bool] | str:
    """A spawn request (the last item: whether a pipe of private environment comes with it), or what is
    wrong with it."""
    try:
        request = json.loads(message)
        return (int(request["id"]), Job(str(request["module"]), tuple(map(str, request["args"]))),
                {str(k): str(v) for k, v in request["env"].items()}, Path(request["log"]),
                request.get("private") is True)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return f"bad request: {exc!r}"


def reap(replies: IO[str]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        tell(replies, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})


def tell(replies: IO[str], message: Mapping[str, Any]) -> None:
    replies.write(json.dumps(message) + "\n")
    replies.flush()


def become(job: Job, env: Mapping[str, str], log: Path, tie: Callable[[], None] | None,
           fds: Sequence[int], private: int | None = None) -> None:
    """In the forked child: a session, stdio, environment and name of its own; tied to the zygote's life
    (`tie`, as a supervised child is tied to its supervisor's). The `private` pipe's variables join the
    environment; this child is the only reader the pipe ever had."""
    os.setsid()
    # What `ps` shows, as if it had been started as `python -m <module>`: its command line and name.
    setproctitle.setproctitle(" ".join([sys.executable, "-m", job.module, *job.args]))
    setproctitle.setthreadtitle(Path(sys.executable).name)
    if tie is not None:
        tie()
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd in fds:
        os.close(fd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    log.parent.mkdir(parents=True, exist_ok=True)
    out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    os.environ.clear()
    os.environ.update(env)
    if private is not None:
        os.environ.update(read_private(private))
    sys.argv = [f"-m {job.module}", *job.args]


def read_private(fd: int) -> dict[str, str]:
    """What the supervisor wrote to the pipe before handing it over (a JSON object), read to its end."""
    chunks = []
    with os.fdopen(fd, "rb") as pipe:
        while chunk := pipe.read():
            chunks.append(chunk)
    variables = json.loads(b"".join(chunks) or b"{}")
    return {str(name): str(value) for name, value in variables.items()}


def main() -> None:
    leave_out("rich", "aiohttp")  # as every service does first (shared/lean.py)
    preload()
    job = serve(socket.socket(fileno=sys.stdin.fileno()), sys.stdout)
    runpy.run_module(job.module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
