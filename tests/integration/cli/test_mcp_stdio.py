"""`bench mcp` on stdio without a gateway (MCP-1, MCP-2, A-73): it negotiates the version, answers ping and
tools/list itself, writes nothing but protocol messages on stdout, and a tool call with no gateway behind
the URL is an `isError` result naming the URL; `bench mcp install` writes the project settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from shared.mcp_tools import TOOL_NAMES
from shared.natsserver import free_port

ROOT = Path(__file__).resolve().parents[3]


def bench(*args: str, stdin: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """This worktree's CLI (`python -m cli.main`), as an agent would start it."""
    return subprocess.run([sys.executable, "-m", "cli.main", *args], input=stdin, capture_output=True,
                          text=True, timeout=60, cwd=ROOT, env={**os.environ, **(env or {})})


def conversation(lines: list[str], answers: int, env: dict[str, str]) -> list[str]:
    """Send every line, read stdout until `answers` lines came, then close stdin (the end of the session)."""
    proc = subprocess.Popen([sys.executable, "-m", "cli.main", "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT,
                            env={**os.environ, **env})
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        read = [proc.stdout.readline() for _ in range(answers)]
        proc.stdin.close()
        rest = proc.stdout.read()
        proc.wait(timeout=30)
    finally:
        proc.kill()
    return [line for line in [*read, *rest.splitlines()] if line.strip()]


def rpc(id_: int | None, method: str, params: dict[str, Any] | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id_ is not None:
        message["id"] = id_
    if params is not None:
        message["params"] = params
    return json.dumps(message)


def test_a73_stdio_answers_initialize_ping_and_tools_list_and_nothing_else() -> None:
    nowhere = f"http://127.0.0.1:{free_port()}"
    lines = [
        rpc(1, "initialize", {"protocolVersion": "1999-01-01", "capabilities": {},
                              "clientInfo": {"name": "test", "version": "1"}}),
        rpc(None, "notifications/initialized"),
        rpc(2, "ping"),
        rpc(3, "tools/list"),
        rpc(4, "tools/call", {"name": "list_collections", "arguments": {}}),
        rpc(5, "tools/call", {"name": "no_such_tool", "arguments": {}}),
        rpc(6, "no/such/method"),
    ]
    said = conversation(lines, 6, {"BENCHWARMERS_URL": nowhere})
    replies = [json.loads(line) for line in said]  # every stdout line is JSON-RPC
    by_id = {reply["id"]: reply for reply in replies}
    assert sorted(by_id) == [1, 2, 3, 4, 5, 6] and all(r["jsonrpc"] == "2.0" for r in replies)
    init = by_id[1]["result"]
    assert init["protocolVersion"] == "2025-11-25"
    assert init["serverInfo"]["name"] == "benchwarmers"
    assert init["capabilities"]["tools"] == {"listChanged": False}
    assert by_id[2]["result"] == {}
    assert [tool["name"] for tool in by_id[3]["result"]["tools"]] == list(TOOL_NAMES)
    failed = by_id[4]["result"]
    assert failed["isError"] is True and nowhere in failed["content"][0]["text"]
    assert by_id[5]["error"]["code"] == -32602 and by_id[6]["error"]["code"] == -32601


def test_a_known_version_is_kept() -> None:
    params = {"protocolVersion": "2025-03-26", "capabilities": {},
              "clientInfo": {"name": "t", "version": "1"}}
    done = bench("mcp", stdin=rpc(1, "initialize", params) + "\n")
    assert json.loads(done.stdout)["result"]["protocolVersion"] == "2025-03-26"


def test_the_stop_hook_never_fails_the_agent(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"x": "p20260101-120000-ab12.member1"}\n')
    hook = json.dumps({"session_id": "s", "transcript_path": str(transcript), "stop_hook_active": False})
    nowhere = f"http://127.0.0.1:{free_port()}"
    for stdin in (hook, "garbage", ""):
        done = bench("mcp", "stop-hook", stdin=stdin, env={"BENCHWARMERS_URL": nowhere})
        assert (done.returncode, done.stdout) == (0, "")
    assert nowhere in bench("mcp", "stop-hook", stdin=hook, env={"BENCHWARMERS_URL": nowhere}).stderr


def test_install_writes_the_server_and_the_hook_into_a_project(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"model": "keep-me"}))
    for _ in range(2):
        assert bench("mcp", "install", "--dir", str(tmp_path), stdin="").returncode == 0
    server = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["benchwarmers"]
    assert server["args"] == ["mcp"] and Path(server["command"]).name in ("bench", "main.py")
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert settings["model"] == "keep-me" and len(settings["hooks"]["Stop"]) == 1
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"].endswith("mcp stop-hook")
