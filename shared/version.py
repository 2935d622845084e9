"""The product's version and the date it was cut, as `X-Benchwarmers-Version` (H-0) and `bench --version` say
them. The date moves with the version in pyproject.toml."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

RELEASED = "2026-12-02"


def package_version() -> str:
    try:
        return version("benchwarmers")
    except PackageNotFoundError:
        return "0.0.0"


def version_line() -> str:
    """`<version> <date>`, e.g. `0.1.0 2026-12-02`."""
    return f"{package_version()} {RELEASED}"
