"""The scheduler's jobs by name and its modes (SPEC HL-7): the prober runs the jobs at their times, the
gateway validates and lists the settings, so both read the names from here."""

from __future__ import annotations

from enum import StrEnum


class JobName(StrEnum):
    AVAILABILITY = "availability"
    CATALOG = "catalog"
    SUITE_FREE = "suite-free"
    DEPRECATIONS = "deprecations"
    PERF = "perf"
    CAPABILITIES = "capabilities"
    SUITE = "suite"


class Mode(StrEnum):
    OFF = "off"  # a fresh install spends nothing
    LOG_ONLY = "log-only"  # say what would run, run nothing
    RUN = "run"


def parse_mode(value: str) -> Mode:
    try:
        return Mode(value.strip().lower())
    except ValueError:
        choices = ", ".join(m.value for m in Mode)
        raise ValueError(f"scheduler mode {value!r} is not one of {choices}") from None
