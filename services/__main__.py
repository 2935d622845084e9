# ruff: noqa: E402
"""`python -m services gateway [console]`: the composition root. It serves the named HTTP surfaces in one
process on one port: the gateway (the model APIs, `/bench/*`, MCP) and, when named, the console (the admin
API and the dashboard) beside it, sharing its bus connection and configuration fold. It is the one module
that imports more than one service; each service alone still starts as `python -m services.<name>`."""

from __future__ import annotations

from shared.lean import leave_out

leave_out("rich", "aiohttp")  # before anything imports them (shared/lean.py)
# isort: split

import argparse
from collections.abc import Sequence

SURFACES = ("console",)


def parse(argv: Sequence[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(
        prog="python -m services",
        description="Serve the gateway, with the named surfaces beside it, in one process on one port "
                    "(settings: BENCH_* as for `python -m services.gateway`).",
    )
    parser.add_argument("names", nargs="+", metavar="service", choices=("gateway", *SURFACES),
                        help="gateway, then any of: console")
    names: list[str] = parser.parse_args(argv).names
    if names[0] != "gateway":
        parser.error("name the gateway first: the console is served beside it (python -m services gateway "
                     "console)")
    return names


def main(argv: Sequence[str] | None = None) -> None:
    names = parse(argv)
    from services.gateway.server import serve

    surfaces = []
    if "console" in names:
        from services.console.surface import Console

        surfaces.append(Console())
    serve(surfaces)


if __name__ == "__main__":
    main()
