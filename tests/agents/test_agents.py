"""Real agent CLIs complete a tool loop through route mode (issues 4 and 16): Claude Code over Anthropic
Messages, Codex over Responses, opencode over OpenAI chat, each with its default configuration (only the base
URL, the model and a key), driven non-interactively through `bench/agents:route` to the scripted upstream,
which asks for a shell command and then answers with its output. Codex also runs with README's explicit
settings, and calls one of its namespaced multi-agent tools, which must reach Codex under its namespace.

The command's output differs from its text (`tr` upper-cases it), so the output can only reach the upstream
if the agent really ran the command and sent back the result through the gateway's translation.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.agents.conftest import SERVED, Gateway
from tests.agents.recipes import AGENTS, Finished, Recipe, codex_explicit, execute
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


@dataclass(frozen=True)
class Outcome:
    done: Finished
    chats: list[dict[str, Any]]  # the chat requests the upstream got from this run
    why: str  # what went wrong, for a failure message
    expected: str  # the command's output


def run_agent(
    recipe: Recipe, upstream: ScriptedUpstream, gateway: Gateway, folder: Path, extra: str = ""
) -> Outcome:
    token = secrets.token_hex(6)
    task = f"Run the shell command `echo bench-{token} | tr a-z A-Z` and tell me its output.{extra}"
    before = len(upstream.requests())
    done = execute(recipe(gateway.url, folder, task), timeout=AGENT_TIMEOUT_S)
    seen = upstream.requests()[before:]
    chats = [r for r in seen if r["path"] == "/v1/chat/completions" and isinstance(r["body"], dict)]
    return Outcome(done, chats, explain(recipe.__name__, done, seen, gateway), f"BENCH-{token.upper()}")


def ran_the_command(outcome: Outcome) -> None:
    done, chats, why, expected = outcome.done, outcome.chats, outcome.why, outcome.expected
    assert done.returncode == 0, why
    # Every call came through the gateway: the upstream is asked for the served id, never the collection.
    assert chats and {r["body"].get("model") for r in chats} == {SERVED}, why
    # The agent ran the command and the gateway carried its output back as a tool message.
    assert any(expected in output for output in tool_outputs(chats)), why
    # The agent printed the final answer, which names the output.
    assert FINAL_PREFIX in done.stdout and expected in done.stdout.split(FINAL_PREFIX, 1)[1], why


def offered(chats: list[dict[str, Any]]) -> set[str]:
    return {str((t.get("function") or {}).get("name")) for r in chats for t in r["body"].get("tools") or []}


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_agent_with_its_default_configuration_runs_a_shell_command_through_route_mode(
    agent: str, agent_clis: None, upstream: ScriptedUpstream, gateway: Gateway, tmp_path: Path
) -> None:
    ran_the_command(run_agent(AGENTS[agent], upstream, gateway, tmp_path))


def test_codex_with_the_readmes_explicit_settings_runs_a_shell_command(
    agent_clis: None, upstream: ScriptedUpstream, gateway: Gateway, tmp_path: Path
) -> None:
    outcome = run_agent(codex_explicit, upstream, gateway, tmp_path)
    ran_the_command(outcome)
    assert not any("__" in name for name in offered(outcome.chats)), outcome.why  # no namespace was offered


def test_codex_gets_its_namespaced_tools_call_back_under_its_namespace(
    agent_clis: None, upstream: ScriptedUpstream, gateway: Gateway, tmp_path: Path
) -> None:
    """The member calls `multi_agent_v1__close_agent` (the flattened name it was offered); Codex runs its
    close_agent handler only if the call comes back as `close_agent` in namespace `multi_agent_v1`, and
    answers a name it does not know with `unsupported call: …` instead."""
    probe = ' But first call the tool `multi_agent_v1__close_agent` with `{"target": "bench-probe"}`.'
    outcome = run_agent(AGENTS["codex"], upstream, gateway, tmp_path, probe)
    ran_the_command(outcome)
    assert "multi_agent_v1__close_agent" in offered(outcome.chats), outcome.why
    answers = [o for o in tool_outputs(outcome.chats) if "bench-probe" in o]
    assert answers and not any("unsupported call" in a for a in answers), outcome.why
