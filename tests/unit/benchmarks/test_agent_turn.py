"""The agent-sized route turn of `make bench`: the same bytes every run, the size and shape it says."""

from __future__ import annotations

import json

from benchmarks.agent_turn import AGENT_TOOLS, agent_body


def test_the_body_is_an_agent_turn_of_the_size_asked() -> None:
    body = json.loads(agent_body("bench/core:route"))
    assert body["model"] == "bench/core:route" and body["stream"] is True
    assert len(body["tools"]) == AGENT_TOOLS
    assert body["tools"][0]["function"]["parameters"]["type"] == "object"
    roles = [m["role"] for m in body["messages"]]
    assert roles[:2] == ["system", "user"] and roles[-1] == "user" and len(roles) > 20
    assert body["messages"][1]["content"].startswith("Agent {worker}: ")  # one conversation per load worker
    assert 100 * 1024 <= len(agent_body("x")) < 104 * 1024
    assert len(agent_body("x", kilobytes=10)) < 34 * 1024  # the system prompt and tools alone are ~32 KB


def test_every_run_sends_the_same_bytes() -> None:
    assert agent_body("m") == agent_body("m")
