"""A service process leaves out the optional imports it never uses (shared/lean.py): importing one fails as
the libraries expect, and the services still import without them. The gateway and `bench up`'s supervisor
start without what they load on first use or never need."""

from __future__ import annotations

import subprocess
import sys

import pytest

LEFT_OUT = {service: "rich aiohttp" for service in ("seater", "prober", "ledger", "gateway", "caller")}


@pytest.mark.parametrize("service", sorted(LEFT_OUT))
def test_each_service_imports_without_what_it_leaves_out(service: str) -> None:
    code = (f"import sys\nimport services.{service}.__main__\n"
            "left = [n for n in ('rich', 'aiohttp') if sys.modules.get(n, 0) is None]\n"
            "print(' '.join(left))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == LEFT_OUT[service].split()


# What a long-lived process loads only when first asked, or never: the packages it must not hold at start.
NOT_AT_START = {"services.gateway.__main__": ("mcp", "mcp_types", "jinja2"),
                "services.console.surface": ("mcp", "mcp_types", "jinja2"),
                "cli.supervisor": ("typer", "click", "rich", "httpx", "aiohttp")}


@pytest.mark.parametrize("module", sorted(NOT_AT_START))
def test_a_long_lived_process_starts_without_what_it_loads_on_first_use(module: str) -> None:
    names = NOT_AT_START[module]
    code = (f"import sys\nimport {module}\n"
            f"print(' '.join(n for n in {names!r} if sys.modules.get(n) is not None))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == []
