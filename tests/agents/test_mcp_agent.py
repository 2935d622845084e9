"""Real Claude Code asks the bench over MCP (issue 17, MCP-1..MCP-3): `bench mcp` given with `--mcp-config`
and the Stop hook (`bench mcp stop-hook`) in the project's settings as `bench mcp install` writes them, or
both from the repository's plugin (`--plugin-dir plugin`); the scripted upstream is its model through route
mode. The script calls `ask`, then `verdict` for each seat;
told not to judge, it stops after `ask`, and only the Stop hook's reminder brings it back to judge."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from cli.mcp_setup import server_entry, with_hook
from shared.transcripts import call_ids
from tests.agents.conftest import COLLECTION, Gateway
from tests.agents.recipes import Finished, Run, claude_code, execute
from tests.fakes.scripted import ScriptedUpstream, text_of
from tests.fakes.scripted_mcp import ASK_TOOL, REMINDER_WORDS, VERDICT_TOOL

ROOT = Path(__file__).resolve().parents[2]
AGENT_TIMEOUT_S = 200.0


def with_bench(gateway: str, folder: Path, task: str) -> Run:
    """Claude Code with the benchwarmers MCP server and Stop hook, both this checkout's `bench`."""
    plain = claude_code(gateway, folder, task)
    bench = f"{sys.executable} -m cli.main"
    entry = {**server_entry(sys.executable), "args": ["-m", "cli.main", "mcp"],
             "env": {"PYTHONPATH": str(ROOT), "BENCHWARMERS_URL": gateway}}
    config = folder / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"benchwarmers": entry}}))
    settings = plain.cwd / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(with_hook({}, bench)))
    env = {**plain.env, "PYTHONPATH": str(ROOT), "BENCHWARMERS_URL": gateway}
    argv = [plain.argv[0], "-p", task, "--mcp-config", str(config), "--allowedTools",
            f"{ASK_TOOL},{VERDICT_TOOL}"]
    return Run(argv, env, plain.cwd)


def with_plugin(gateway: str, folder: Path, task: str) -> Run:
    """Claude Code with the repository's plugin (`plugin/`), its `bench` being this checkout's CLI."""
    plain = claude_code(gateway, folder, task)
    shims = folder / "bin"
    shims.mkdir()
    bench = shims / "bench"
    bench.write_text(f'#!/bin/sh\nexec {sys.executable} -m cli.main "$@"\n')
    bench.chmod(0o755)
    env = {**plain.env, "PYTHONPATH": str(ROOT), "BENCHWARMERS_URL": gateway,
           "PATH": f"{shims}:{plain.env['PATH']}"}
    argv = [plain.argv[0], "-p", task, "--plugin-dir", str(ROOT / "plugin"), "--allowedTools",
            "mcp__plugin_benchwarmers_benchwarmers"]
    return Run(argv, env, plain.cwd)


def explain(done: Finished, seen: list[dict[str, Any]], gateway: Gateway) -> str:
    lines = [f"exit {done.returncode}", f"--- stdout\n{done.stdout[-3000:]}",
             f"--- stderr\n{done.stderr[-3000:]}", "--- upstream saw"]
    for r in seen:
        body = r["body"] if isinstance(r["body"], dict) else {}
        said = [(m.get("role"), text_of(m.get("content"))[:160],
                 [(c.get("function") or {}).get("name") for c in m.get("tool_calls") or []])
                for m in body.get("messages") or []]
        tools = [(t.get("function") or {}).get("name") for t in body.get("tools") or []]
        lines.append(f"{r['method']} {r['path']} tools={tools} {said}")
    return "\n".join([*lines, "--- stack logs", gateway.logs()])


def seats_named(seen: list[dict[str, Any]]) -> list[str]:
    """The call ids the ask tool's results carried back to the model."""
    texts = [text_of(m.get("content")) for r in seen if isinstance(r["body"], dict)
             for m in r["body"].get("messages") or [] if m.get("role") == "tool"]
    return call_ids("\n".join(texts))


def still_pending(gateway: Gateway, calls: list[str]) -> list[str]:
    reply = httpx.post(f"{gateway.url}/bench/pending", json={"calls": calls}, timeout=30)
    assert reply.status_code == 200, reply.text
    pending: list[str] = reply.json()["pending"]
    return pending


def user_texts(seen: list[dict[str, Any]]) -> list[str]:
    return [text_of(m.get("content")) for r in seen if isinstance(r["body"], dict)
            for m in r["body"].get("messages") or [] if m.get("role") == "user"]


@pytest.mark.parametrize(
    ("setup", "forgetful"),
    [(with_bench, False), (with_bench, True), (with_plugin, True)],
    ids=["judges-at-once", "reminded-by-the-stop-hook", "the-plugin-reminds-too"],
)
def test_claude_code_asks_the_bench_and_sends_a_verdict_per_seat(
    setup: Any, forgetful: bool, agent_clis: None, upstream: ScriptedUpstream, gateway: Gateway,
    tmp_path: Path,
) -> None:
    task = f"Ask the bench collection `{COLLECTION}` whether the sky is blue, then check each seat's answer."
    if forgetful:
        task += " Answer without judging."
    before = len(upstream.requests())

    done = execute(setup(gateway.url, tmp_path, task), timeout=AGENT_TIMEOUT_S)

    seen = upstream.requests()[before:]
    why = explain(done, seen, gateway)
    assert done.returncode == 0, why
    calls = seats_named(seen)
    assert calls, why  # the ask reached the gateway's panel and its seats came back to the model
    assert still_pending(gateway, calls) == [], why  # every seat got its verdict
    reminders = [text for text in user_texts(seen) if REMINDER_WORDS in text]
    assert bool(reminders) == forgetful, why  # the Stop hook spoke only when a verdict was owed
    assert f"judged {len(calls)}" in done.stdout, why
