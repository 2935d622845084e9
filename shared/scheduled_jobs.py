"""The scheduler's jobs by name (SPEC HL-7): the prober runs them at their times, the gateway's status
lists them, so both read the names from here."""

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
