# ruff: noqa: E402
"""`bench up`'s own process once its command line is read (`cli/commands/up.py` execs this, same PID): it
holds the data folder's lock, starts the stack and tends it until Ctrl-C, SIGTERM or `bench down`.

Only what starting and tending children needs is imported: the CLI's Typer, Rich, httpx and every command
module would cost this long-lived process about 20 MB for nothing. Its lines read as the CLI's do.
"""

from __future__ import annotations

from shared.lean import leave_out

leave_out("rich", "aiohttp")  # the supervisor's NATS look is over TCP (shared/lean.py)
# isort: split

import contextlib
import signal
import socket
import sys
import time
from collections.abc import Iterator

from cli import data_lock
from cli.errors import EXIT_INTERRUPTED, EXIT_REFUSED, CliError
from cli.settings import UpSettings, up_settings
from cli.stack import ChildExited, Stack
from shared.bus_credentials import CredentialsError

SUPERVISE_EVERY_S = 0.5


def say(message: str) -> None:
    """A line for the human, on stderr (as `cli.output.say`)."""
    print(message, file=sys.stderr, flush=True)


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


def run(settings: UpSettings) -> int:
    """The stack's life while this process holds the data folder; the exit code."""
    if port_taken(settings.port):
        raise CliError(f"BENCH_PORT {settings.port} is taken by another program; pick a free BENCH_PORT")
    stack = Stack(home=settings.home, port=settings.port, nats_url=settings.nats_url or None,
                  credentials=settings.nats_credentials, replicas={"seater": settings.seaters},
                  fork_services=settings.fork_services)
    logs = settings.home / "logs"
    say(f"data: {settings.home}")
    say(f"logs: {logs}")
    failed: str | None = None
    with stop_signals_interrupt():
        try:
            stack.start(timeout=settings.start_timeout_s)
            nats = f"embedded, store {stack.nats.store}" if stack.nats else "external"
            say(f"nats: {stack.nats_url} ({nats}; credentials {stack.credentials_folder})")
            print(f"Benchwarmers is up at {stack.url} (OpenAI base URL {stack.url}/v1)", flush=True)
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
        return EXIT_REFUSED
    say("stopped.")
    return 0


def main() -> int:
    try:
        settings = up_settings()
        with data_lock.held(settings.home):
            return run(settings)
    except (ValueError, data_lock.InUse, CliError) as exc:
        lines = exc.lines if isinstance(exc, CliError) else (str(exc),)
        for line in lines:
            say(f"bench: {line}")
        return EXIT_REFUSED
    except KeyboardInterrupt:  # before the stack started: nothing to stop
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
