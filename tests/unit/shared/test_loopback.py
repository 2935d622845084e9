"""One loopback test for endpoint bases (no key needed, kind "local") and the gateway's bind address."""

from __future__ import annotations

import pytest

from shared.loopback import is_loopback, is_loopback_host


def test_loopback_bases() -> None:
    assert is_loopback("http://127.0.0.1:11434/v1")
    assert is_loopback("http://127.0.0.2:11434/v1")
    assert is_loopback("http://localhost:8080/v1")
    assert is_loopback("http://LOCALHOST.localdomain:8080/v1")
    assert is_loopback("http://[::1]:8080/v1")
    assert not is_loopback("https://api.groq.com/openai/v1")
    assert not is_loopback("http://10.0.0.5/v1")
    assert not is_loopback("not a url")


@pytest.mark.parametrize("host", ["127.0.0.1", " localhost ", "[::1]", "::1", "127.1.2.3"])
def test_loopback_binds(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.4", "example.com", ""])
def test_binds_beyond_this_machine(host: str) -> None:
    assert not is_loopback_host(host)
