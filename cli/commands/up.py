"""`bench up`: the whole stack on this machine, in the foreground, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import typer

from cli import data_lock
from cli.errors import CliError
from cli.output import say, stdout
from cli.settings import UpSettings, up_settings
from cli.stack import ChildExited, Stack
from shared.bus_credentials import CredentialsError

SUPERVISE_EVERY_S = 0.5
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


def port_taken(port: int) -> bool:
    """Whether something already listens on the gateway's loopback port (it would die at bind). The probe
    binds as uvicorn does (SO_REUSEADDR): connections of a gateway that just ended, still in TIME_WAIT, do
    not count as the port being taken."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


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
    """Run NATS, the five services and a second seater here, in the foreground; Ctrl-C stops them all.

    Data lives in BENCHWARMERS_HOME (default: your user data folder), and one bench up at a time
    serves it; the gateway listens on 127.0.0.1:8122 (BENCH_PORT changes the port); BENCH_SEATERS sets
    how many seaters run (2); NATS_URL uses an existing NATS instead of the embedded one. A service
    that dies, NATS included, is reported here and started again (after a growing pause if it keeps
    dying). The services end with bench up however it ends, kill -9 included. A bad setting stops it
    before anything starts, with one line naming the variable.

    Example:

    \b
      BENCH_PORT=8200 bench up
    """
    try:
        settings = up_settings()
    except ValueError as exc:
        raise CliError(str(exc)) from None
    try:
        with data_lock.held(settings.home):
            run(settings)
    except data_lock.InUse as exc:
        raise CliError(str(exc)) from None


def run(settings: UpSettings) -> None:
    """The stack's life while this process holds the data folder."""
    if port_taken(settings.port):
        raise CliError(f"BENCH_PORT {settings.port} is taken by another program; pick a free BENCH_PORT")
    stack = Stack(home=settings.home, port=settings.port, nats_url=settings.nats_url or None,
                  credentials=settings.nats_credentials, replicas={"seater": settings.seaters})
    logs = settings.home / "logs"
    say(f"data: {settings.home}")
    say(f"logs: {logs}")
    failed: str | None = None
    with stop_signals_interrupt():
        try:
            stack.start(timeout=settings.start_timeout_s)
            nats = f"embedded, store {stack.nats.store}" if stack.nats else "external"
            say(f"nats: {stack.nats_url} ({nats}; credentials {stack.credentials_folder})")
            stdout.print(f"Benchwarmers is up at {stack.url} (OpenAI base URL {stack.url}/v1)", markup=False)
            say("Ctrl-C stops everything.")
            while True:
                for line in stack.supervise_once():
                    say(f"bench: {line}")
                time.sleep(SUPERVISE_EVERY_S)
        except KeyboardInterrupt:
            say("stopping…")
        except ChildExited as exc:
            failed = exc.summary
        except (RuntimeError, CredentialsError) as exc:
            failed = str(exc)
        except Exception as exc:  # reported below, after everything started is stopped
            failed = f"{type(exc).__name__}: {exc}"
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
