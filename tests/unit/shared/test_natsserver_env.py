"""The embedded nats-server's environment: Go's soft memory limit unless the operator exported one."""

from __future__ import annotations

from shared.natsserver import GO_MEMORY_LIMIT, server_env


def test_the_server_gets_a_soft_memory_limit_and_keeps_the_rest_of_the_environment() -> None:
    env = server_env({"PATH": "/usr/bin"})
    assert env == {"PATH": "/usr/bin", "GOMEMLIMIT": GO_MEMORY_LIMIT}


def test_an_exported_limit_wins() -> None:
    assert server_env({"GOMEMLIMIT": "1GiB"})["GOMEMLIMIT"] == "1GiB"
