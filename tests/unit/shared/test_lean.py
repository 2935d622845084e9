"""A service process leaves out the optional imports it never uses (shared/lean.py): importing one fails as
the libraries expect, and the services still import without them."""

from __future__ import annotations

import subprocess
import sys

import pytest

LEFT_OUT = {"seater": "rich aiohttp", "prober": "rich aiohttp", "ledger": "rich aiohttp",
            "gateway": "rich aiohttp", "caller": "rich"}


@pytest.mark.parametrize("service", sorted(LEFT_OUT))
def test_each_service_imports_without_what_it_leaves_out(service: str) -> None:
    code = (f"import sys\nimport services.{service}.__main__\n"
            "left = [n for n in ('rich', 'aiohttp') if sys.modules.get(n, 0) is None]\n"
            "print(' '.join(left))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == LEFT_OUT[service].split()
