"""Run by the zygote in `test_forked.py` as `python -m tests.integration.cli.forked_probe <exit code | wait>`:
prints what it finds itself to be (one JSON line), then exits with that code or waits to be signalled."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path


def main() -> None:
    print(json.dumps({
        "pid": os.getpid(), "ppid": os.getppid(), "sid": os.getsid(0), "argv": sys.argv[1:],
        "env": dict(os.environ), "name": Path("/proc/self/comm").read_text().strip(),
        "cmdline": Path("/proc/self/cmdline").read_bytes().decode(errors="replace"),
        "stdin": sys.stdin.read(), "frozen": __import__("gc").get_freeze_count() > 0,
        "sigchld": signal.getsignal(signal.SIGCHLD) == signal.SIG_DFL,
    }), flush=True)
    print("to stderr", file=sys.stderr, flush=True)
    if sys.argv[1] == "wait":
        signal.pause()
    raise SystemExit(int(sys.argv[1]))


if __name__ == "__main__":
    main()
