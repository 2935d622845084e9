"""What can go wrong in a `bench` command, each with the exit code SPEC CLI-4 gives it."""

from __future__ import annotations

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A failure shown as `bench: <line>` on stderr, one line per reason."""

    exit_code = EXIT_REFUSED

    def __init__(self, *lines: str, raw: str | None = None) -> None:
        super().__init__(lines[0] if lines else "")
        self.lines = lines or ("failed",)
        self.raw = raw  # the server's reply, printed verbatim with --json


class Refused(CliError):
    """The server answered and said no (4xx), or failed (5xx, timeout)."""


class UsageProblem(CliError):
    """The command line cannot be run as given (e.g. a confirmation is needed and nobody can answer)."""

    exit_code = EXIT_USAGE


class Unreachable(CliError):
    """Nothing answered at the server URL."""

    exit_code = EXIT_UNREACHABLE
