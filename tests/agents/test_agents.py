"""Real agent CLIs complete a tool loop through route mode (issue 4): Claude Code over Anthropic Messages,
Codex over Responses, opencode over OpenAI chat, each driven non-interactively through `bench/agents:route`
to the scripted upstream, which asks for a shell command and then answers with its output.

The command's output differs from its text (`tr` upper-cases it), so the output can only reach the upstream
if the agent really ran the command and sent back the result through the gateway's translation.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import SERVED, Gateway
from tests.agents.recipes import AGENTS, Finished, execute
from tests.fakes.scripted import FINAL_PREFIX, ScriptedUpstream, text_of

AGENT_TIMEOUT_S = 150.0


def tool_outputs(chats: list[dict[str, Any]]) -> list[str]:
    return [text_of(m.get("content")) for r in chats for m in r["body"].get("messages") or []
            if m.get("role") == "tool"]


def explain(agent: str, done: Finished, seen: list[dict[str, Any]], gateway: Gateway) -> str:
    """What went wrong, for the failure message: the agent's output, what reached the upstream, the logs."""
    lines = [f"{agent} exit {done.returncode}", f"--- stdout\n{done.stdout[-3000:]}",
             f"--- stderr\n{done.stderr[-3000:]}", "--- upstream saw"]
    for r in seen:
        body = r["body"] if isinstance(r["body"], dict) else {}
        roles = [m.get("role") for m in body.get("messages") or []]
        tools = [(t.get("function") or {}).get("name") for t in body.get("tools") or []]
        lines.append(f"{r['method']} {r['path']} model={body.get('model')} roles={roles} tools={tools}")
    if done.leftovers:
        lines.append(f"--- left running (ended): {done.leftovers}")
    return "\n".join([*lines, "--- stack logs", gateway.logs()])


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_agent_runs_a_shell_command_through_route_mode(
    agent: str, agent_clis: None, upstream: ScriptedUpstream, gateway: Gateway, tmp_path: Path
) -> None:
    token = secrets.token_hex(6)
    expected = f"BENCH-{token.upper()}"
    task = f"Run the shell command `echo bench-{token} | tr a-z A-Z` and tell me its output."
    before = len(upstream.requests())

    done = execute(AGENTS[agent](gateway.url, tmp_path, task), timeout=AGENT_TIMEOUT_S)

    seen = upstream.requests()[before:]
    why = explain(agent, done, seen, gateway)
    assert done.returncode == 0, why
    chats = [r for r in seen if r["path"] == "/v1/chat/completions" and isinstance(r["body"], dict)]
    # Every call came through the gateway: the upstream is asked for the served id, never the collection.
    assert chats and {r["body"].get("model") for r in chats} == {SERVED}, why
    # The agent ran the command and the gateway carried its output back as a tool message.
    assert any(expected in output for output in tool_outputs(chats)), why
    # The agent printed the final answer, which names the output.
    assert FINAL_PREFIX in done.stdout and expected in done.stdout.split(FINAL_PREFIX, 1)[1], why
