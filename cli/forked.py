"""The supervisor's side of `shared.zygote`: start it, ask it for a service, follow what it forked.

A forked service is not the supervisor's child (the zygote is its parent and reaps it), so `Forked` stands
in for `subprocess.Popen` with what the zygote reports: its PID at once, its exit code when it ends.
A service's private environment (a caller's provider keys) goes into a pipe that only the forked child
reads (`Zygote.spawn`); the zygote passes the pipe on without reading it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from shared import processes


class Forked:
    """A service forked by the zygote, with the part of `subprocess.Popen` the supervisor uses."""

    def __init__(self, pid: int, cmd: Sequence[str]) -> None:
        self.pid, self.args = pid, list(cmd)
        self.returncode: int | None = None
        self._ended = threading.Event()

    def ended(self, code: int) -> None:
        self.returncode = code
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        assert self.returncode is not None
        return self.returncode


class Zygote:
    """The supervisor's side: starts the zygote (again, if it died) and asks it for services."""

    def __init__(self, env: Mapping[str, str], log_path: Path) -> None:
        self.env, self.log_path = dict(env), log_path
        self.proc: subprocess.Popen[str] | None = None
        self._requests: socket.socket | None = None  # our end of the zygote's stdin
        self._sending = threading.Lock()
        self._asked: dict[int, list[str]] = {}  # request id -> its command, until answered
        self._answers: dict[int, Forked | str] = {}
        self._lock = threading.Condition()
        self._next_id = 0

    def start(self) -> None:
        """Start the zygote from the supervisor's main thread (it dies with that thread)."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with open(self.log_path, "ab") as log_file, theirs:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "shared.zygote"], stdin=theirs.fileno(), stdout=subprocess.PIPE,
                stderr=log_file, env=self.env, text=True, start_new_session=True,
                preexec_fn=processes.die_with_us())
        if self._requests is not None:
            self._requests.close()
        self._requests = ours
        threading.Thread(target=self._read, args=(self.proc,), name="zygote-reader", daemon=True).start()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def spawn(self, cmd: Sequence[str], env: Mapping[str, str], log_path: Path, timeout: float = 60.0,
              private: Mapping[str, str] | None = None) -> Forked:
        """Fork `python -m <module> <args...>` (`cmd` as `processes.service_command` gives it) with `env`,
        and `private` added to it on the child's side only."""
        if list(cmd[1:2]) != ["-m"] or len(cmd) < 3:
            raise ValueError(f"the zygote runs `python -m <module>` commands, not {list(cmd)}")
        if not self.alive():
            self.start()
        proc, requests = self.proc, self._requests
        assert proc is not None and requests is not None
        with self._lock:
            self._next_id += 1
            ask = self._next_id
            self._asked[ask] = list(cmd)
        request = {"id": ask, "module": cmd[2], "args": list(cmd[3:]), "env": dict(env), "log": str(log_path)}
        pipe = filled_pipe(private) if private else None
        try:
            with self._sending:
                if pipe is None:
                    requests.send(json.dumps(request).encode())
                else:
                    socket.send_fds(requests, [json.dumps({**request, "private": True}).encode()], [pipe])
        except OSError as exc:
            raise RuntimeError(f"the zygote is gone ({exc}); see {self.log_path}") from exc
        finally:
            if pipe is not None:
                os.close(pipe)
        with self._lock:
            if not self._lock.wait_for(lambda: ask in self._answers or proc.poll() is not None, timeout):
                raise RuntimeError(f"the zygote did not fork {cmd[2]} within {timeout}s; see {self.log_path}")
            answer = self._answers.pop(ask, f"it ended; see {self.log_path}")
        if isinstance(answer, str):
            raise RuntimeError(f"the zygote could not fork {cmd[2]}: {answer}")
        return answer

    def _read(self, proc: subprocess.Popen[str]) -> None:
        """Follow one zygote's answers until it ends; `forked` is what it forked, until each ends."""
        assert proc.stdout is not None
        forked: dict[int, Forked] = {}
        for line in proc.stdout:
            message = json.loads(line)
            with self._lock:
                if "exited" in message:
                    ended = forked.pop(message["exited"], None)
                    if ended is not None:
                        ended.ended(message["code"])
                elif "pid" in message:
                    made = Forked(message["pid"], self._asked.pop(message["id"], []))
                    forked[made.pid] = self._answers[message["id"]] = made
                elif message.get("id") is not None:  # a request it refused (a line without an id: not ours)
                    self._asked.pop(message["id"], None)
                    self._answers[message["id"]] = str(message.get("error"))
                self._lock.notify_all()
        proc.wait()
        with self._lock:
            self._lock.notify_all()  # a spawn waiting on this zygote hears it ended
        # The kernel kills what it forked (their tie to it); none of them can be waited on now.
        for orphan in forked.values():
            processes.wait_gone(orphan.pid)
            orphan.ended(-signal.SIGKILL)

    def stop(self, timeout: float = 10.0) -> None:
        processes.stop(self.proc, timeout)
        if self._requests is not None:
            self._requests.close()
            self._requests = None


def filled_pipe(variables: Mapping[str, str]) -> int:
    """The read end of a pipe holding `variables` as JSON, its write end already closed: what is in it
    lives in the kernel's pipe buffer until the one process that reads it does."""
    data = json.dumps(dict(variables)).encode()
    read, write = os.pipe()
    try:
        os.set_blocking(write, False)
        if os.write(write, data) != len(data):  # beyond the pipe's buffer (64 KiB on Linux)
            raise ValueError(f"a private environment of {len(data)} bytes does not fit in a pipe")
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
    return read
