"""`bench up`: the whole stack on this machine, in the foreground, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import typer

from cli.errors import CliError
from cli.output import say, stdout
from cli.settings import UpSettings
from cli.stack import Stack

SUPERVISE_EVERY_S = 0.5
PID_FILE = "bench-up.pid"
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


def running_pid(home: Path) -> int | None:
    """The pid of the `bench up` serving this data folder, if one still runs."""
    try:
        pid = int((home / PID_FILE).read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if alive(pid) else None


@contextlib.contextmanager
def pid_file(home: Path) -> Iterator[None]:
    """`bench down` finds this process by the pid written here, and only while it runs."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / PID_FILE
    path.write_text(str(os.getpid()))
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()


@contextlib.contextmanager
def stop_signals_interrupt() -> Iterator[None]:
    """SIGTERM (a service manager, `docker stop`) stops the stack the way Ctrl-C does; so does SIGINT even
    when the shell that started us in the background told us to ignore it."""
    stops = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, signal.default_int_handler) for sig in stops}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def signals_ignored() -> Iterator[None]:
    """A second Ctrl-C must not cut the clean stop short and leave children behind."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def up() -> None:
    """Run NATS and the five services here, in the foreground; Ctrl-C stops them all.

    Data lives in BENCHWARMERS_HOME (default: your user data folder); the gateway listens on
    127.0.0.1:8122 (BENCH_PORT changes the port); NATS_URL uses an existing NATS instead of the
    embedded one. A service that crashes is reported here and restarted.

    Example:

    \b
      BENCH_PORT=8200 bench up
    """
    settings = UpSettings()
    running = running_pid(settings.home)
    if running is not None:
        raise CliError(f"bench up is already running here (pid {running}); bench down stops it")
    stack = Stack(home=settings.home, port=settings.port, nats_url=settings.nats_url or None,
                  credentials=settings.nats_credentials)
    logs = settings.home / "logs"
    say(f"data: {settings.home}")
    say(f"logs: {logs}")
    failed: str | None = None
    with stop_signals_interrupt(), pid_file(settings.home):
        try:
            stack.start(timeout=settings.start_timeout_s)
            nats = f"embedded, store {stack.nats.store}" if stack.nats else "external"
            say(f"nats: {stack.nats_url} ({nats}; credentials {stack.credentials_folder})")
            stdout.print(f"Benchwarmers is up at {stack.url} (OpenAI base URL {stack.url}/v1)", markup=False)
            say("Ctrl-C stops everything.")
            while True:
                for restarted in stack.supervise_once():
                    say(f"bench: {restarted} died; restarted it (its log is in {logs})")
                time.sleep(SUPERVISE_EVERY_S)
        except KeyboardInterrupt:
            say("stopping…")
        except Exception as exc:  # reported below, after everything started is stopped
            failed = str(exc) if isinstance(exc, RuntimeError) else f"{type(exc).__name__}: {exc}"
        finally:
            with signals_ignored():
                stack.stop()
    if failed is not None:
        say(f"bench: the stack failed: {failed}")
        raise typer.Exit(1)
    say("stopped.")


def down() -> None:
    """Stop the stack `bench up` runs for this data folder (BENCHWARMERS_HOME), as Ctrl-C would.

    Example:

    \b
      bench down
    """
    settings = UpSettings()
    pid = running_pid(settings.home)
    if pid is None:
        raise CliError(f"no bench up is running for {settings.home}")
    os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + DOWN_WAIT_S
    while alive(pid):
        if time.monotonic() > end:
            raise CliError(f"bench up (pid {pid}) did not stop within {DOWN_WAIT_S:g}s")
        time.sleep(0.1)
    say("stopped.")
