"""A real stack whose collection `agents` routes to the scripted upstream; the agent CLIs installed from npm.

The CLIs are installed on first use (`tests.agents.install`); without node and npm, or when the install
fails, every agent test skips with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from cli.stack import Stack
from shared.natsserver import free_port
from tests.agents import install
from tests.fakes.scripted import ScriptedUpstream

ENDPOINT = "scripted"
SERVED = "scripted-agent-model"
COLLECTION = "agents"


@pytest.fixture(scope="session")
def agent_clis() -> None:
    why = install.ensure_installed()
    if why:
        pytest.skip(f"agent CLIs unavailable: {why}")


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScriptedUpstream]:
    fake = ScriptedUpstream(log_path=tmp_path_factory.mktemp("scripted") / "scripted.log").start()
    try:
        yield fake
    finally:
        fake.stop()


def admin_post(http: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = http.post(path, json=body)
    data: dict[str, Any] = reply.json()
    assert reply.status_code == 200 and data.get("ok"), (path, body, reply.status_code, data)
    return data


def stack_logs(home: Path) -> str:
    return "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}"
                     for log in sorted((home / "logs").glob("*.log")))


@dataclass(frozen=True)
class Gateway:
    url: str  # the root, without /v1
    home: Path  # the stack's folder (logs/)

    def logs(self) -> str:
        return stack_logs(self.home)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, upstream: ScriptedUpstream) -> Iterator[Gateway]:
    """A running stack's gateway; collection `agents` = one tool-calling model on the scripted upstream."""
    home = tmp_path_factory.mktemp("agents-stack")
    key = {"BENCHWARMERS_KEY_SCRIPTED": "sk-scripted-not-real"}
    stack = Stack(home=home, port=free_port(), extra_env=key)
    try:
        stack.start()
        with httpx.Client(base_url=stack.url, timeout=30) as http:
            admin_post(http, "/api/endpoint", {"name": ENDPOINT, "base": upstream.base_url})
            alias = admin_post(http, "/api/models", {"served": SERVED, "endpoint": ENDPOINT, "tools": True,
                                                     "context_window": 200_000, "max_output": 8_192})
            admin_post(http, "/api/collection", {"name": COLLECTION, "members": [alias["model"]["alias"]]})
        yield Gateway(stack.url, home)
    except BaseException:
        print(stack_logs(home))
        raise
    finally:
        stack.stop()
