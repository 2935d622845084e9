"""A child spawned with `die_with_parent` ends when its parent is killed with SIGKILL (no orphan), and is
spawned from the main thread only."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from shared import processes

ROOT = Path(__file__).resolve().parents[3]
PARENT = """
import sys, time
from shared import processes
child = processes.spawn([sys.executable, "-c", "import time; time.sleep(60)"], die_with_parent=True)
print(child.pid, flush=True)
time.sleep(60)
"""


def running(pid: int) -> bool:
    """Alive and not a zombie (a killed orphan waits for init to reap it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_dies_with_its_killed_parent() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        assert running(child)
        parent.kill()
        parent.wait(10)
        end = time.monotonic() + 5
        while running(child) and time.monotonic() < end:
            time.sleep(0.05)
        assert not running(child), "the child outlived its killed parent"
    finally:
        if running(child):
            os.kill(child, signal.SIGKILL)


def test_a_tied_child_is_refused_from_another_thread() -> None:
    """Linux ties the signal to the forking thread: a child spawned from a worker thread would die with it."""
    failure: list[BaseException] = []

    def spawn() -> None:
        try:
            processes.spawn([sys.executable, "-c", "pass"], die_with_parent=True)
        except RuntimeError as exc:
            failure.append(exc)

    worker = threading.Thread(target=spawn)
    worker.start()
    worker.join(10)
    assert len(failure) == 1 and "main thread" in str(failure[0])
