"""The zygote (`shared/zygote.py`) through the supervisor's side of it (`cli/forked.py`): what it forks is a
process of its own (PID, session, environment, log, command line, name) that shares the zygote's imported
pages; its exit code comes back as `subprocess.Popen` would give it; it dies with the zygote; a zygote
that died is started again by the next spawn; and a private environment reaches the child without ever
being in the zygote's memory."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli.forked import Forked, Zygote
from shared import processes
from tests.process_memory import holds

PROBE = [sys.executable, "-m", "tests.integration.cli.forked_probe"]
ENV = {"ONLY": "this child's", "PATH": os.environ.get("PATH", "")}


@pytest.fixture
def zygote(tmp_path: Path) -> Iterator[Zygote]:
    made = Zygote({**os.environ, "ZYGOTE_OWN": "not for its children"}, tmp_path / "zygote.log")
    made.start()
    forked: list[Forked] = []
    spawn = made.spawn

    def tracked(*args: Any, **kwargs: Any) -> Forked:
        forked.append(spawn(*args, **kwargs))
        return forked[-1]

    made.spawn = tracked  # type: ignore[method-assign]
    try:
        yield made
    finally:
        made.stop()
        for child in forked:
            if not processes.wait_gone(child.pid, 5):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, signal.SIGKILL)


def report(log: Path, timeout: float = 30.0) -> dict[str, Any]:
    """The probe's first line: what it found itself to be."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        lines = log.read_text().splitlines() if log.exists() else []
        if lines:
            found: dict[str, Any] = json.loads(lines[0])
            return found
        time.sleep(0.02)
    raise AssertionError(f"the probe wrote nothing to {log}")


def shared_kb(pid: int) -> int:
    lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]
    fields = dict(line.split(":", 1) for line in lines)
    return int(fields["Shared_Clean"].split()[0]) + int(fields["Shared_Dirty"].split()[0])


def test_a_forked_process_is_one_of_its_own_and_its_exit_code_comes_back(
    zygote: Zygote, tmp_path: Path
) -> None:
    log = tmp_path / "logs" / "probe.log"
    forked = zygote.spawn([*PROBE, "3"], ENV, log)
    assert forked.wait(30) == 3 and forked.poll() == 3 and forked.returncode == 3
    seen = report(log)
    assert zygote.proc is not None
    assert (seen["pid"], seen["ppid"], seen["sid"]) == (forked.pid, zygote.proc.pid, forked.pid)
    assert seen["env"] == ENV  # nothing of the zygote's own environment
    assert seen["argv"] == ["3"]
    assert seen["cmdline"].rstrip("\0") == " ".join([*PROBE, "3"])  # as `ps` shows it
    assert seen["name"] == Path(sys.executable).name[:15]
    assert seen["stdin"] == ""
    assert seen["frozen"] and seen["sigchld"]
    assert "to stderr" in log.read_text()


def test_it_shares_the_zygotes_imports_and_a_signal_ends_it_as_popen_would_say(
    zygote: Zygote, tmp_path: Path
) -> None:
    log = tmp_path / "probe.log"
    forked = zygote.spawn([*PROBE, "wait"], ENV, log)
    report(log)
    assert shared_kb(forked.pid) > 10 * 1024  # the interpreter and the preloaded modules' pages
    assert forked.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        forked.wait(0.05)
    assert processes.stop(forked, 10) == -signal.SIGTERM


def test_what_it_forked_dies_with_it_and_the_next_spawn_starts_it_again(
    zygote: Zygote, tmp_path: Path
) -> None:
    forked = zygote.spawn([*PROBE, "wait"], ENV, tmp_path / "first.log")
    report(tmp_path / "first.log")
    assert zygote.proc is not None
    first = zygote.proc.pid
    os.kill(first, signal.SIGKILL)
    assert forked.wait(30) == -signal.SIGKILL
    assert processes.wait_gone(forked.pid, 10)

    again = zygote.spawn([*PROBE, "0"], ENV, tmp_path / "again.log")
    assert again.wait(30) == 0
    assert zygote.alive() and zygote.proc.pid != first


def test_a_module_that_fails_to_start_exits_1_with_its_traceback_in_its_log(
    zygote: Zygote, tmp_path: Path
) -> None:
    log = tmp_path / "missing.log"
    forked = zygote.spawn([sys.executable, "-m", "tests.integration.cli.no_such_module"], ENV, log)
    assert forked.wait(30) == 1
    assert "No module named tests.integration.cli.no_such_module" in log.read_text()
    assert zygote.alive()


def test_only_python_dash_m_commands_are_taken(zygote: Zygote, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="python -m"):
        zygote.spawn(["/bin/true"], ENV, tmp_path / "x.log")


def test_a_private_environment_reaches_the_child_and_never_the_zygotes_memory(
    zygote: Zygote, tmp_path: Path
) -> None:
    secret = "sk-" + os.urandom(12).hex()  # made here, so no other process can hold it by chance
    log = tmp_path / "private.log"
    forked = zygote.spawn([*PROBE, "wait"], ENV, log, private={"BENCHWARMERS_KEY_PROBE": secret})
    assert report(log)["env"] == {**ENV, "BENCHWARMERS_KEY_PROBE": secret}
    assert zygote.proc is not None
    assert holds(forked.pid, secret.encode())  # the scan finds what is there
    assert not holds(zygote.proc.pid, secret.encode())
    assert secret not in (tmp_path / "zygote.log").read_text()
    assert processes.stop(forked, 10) == -signal.SIGTERM


def test_a_request_whose_private_flag_and_pipe_disagree_is_refused(zygote: Zygote, tmp_path: Path) -> None:
    """Asked with `private` but no pipe: refused by id, nothing forked, and the zygote goes on."""
    assert zygote._requests is not None
    request = {"id": 99, "module": "tests.integration.cli.forked_probe", "args": ["0"], "env": ENV,
               "log": str(tmp_path / "never.log"), "private": True}
    zygote._asked[99] = ["refused"]
    zygote._requests.send(json.dumps(request).encode())
    with zygote._lock:
        assert zygote._lock.wait_for(lambda: 99 in zygote._answers, 30)
    assert "disagree" in str(zygote._answers.pop(99))
    assert zygote.spawn([*PROBE, "0"], ENV, tmp_path / "after.log").wait(30) == 0
