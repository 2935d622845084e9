"""The Claude Code side of `bench mcp` without I/O: the Stop hook's input and answer, the settings
`bench mcp install` merges, and the plugin in `plugin/` saying the same."""

from __future__ import annotations

import json
from pathlib import Path

from cli.mcp_setup import hook_arguments, hook_reply, server_entry, stop_hook, with_hook, with_server

PLUGIN = Path(__file__).resolve().parents[3] / "plugin"


def test_the_hook_input_becomes_the_tools_arguments() -> None:
    raw = json.dumps({"session_id": "abc", "transcript_path": "/t.jsonl", "stop_hook_active": True,
                      "hook_event_name": "Stop"})
    assert hook_arguments(raw) == {"session": "abc", "transcript": "/t.jsonl", "active": True}
    assert hook_arguments("not json") == {} and hook_arguments("[1]") == {} and hook_arguments("") == {
        "session": None, "transcript": None, "active": None}


def test_a_reminder_blocks_the_stop_once_with_its_words_and_nothing_else_does() -> None:
    tool = json.dumps({"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "send verdicts"}})
    assert json.loads(hook_reply(tool)) == {"decision": "block", "reason": "send verdicts"}
    for text in ("", "  ", "garbage", "[]", json.dumps({"hookSpecificOutput": {"additionalContext": ""}})):
        assert hook_reply(text) == ""


def test_install_merges_ours_and_keeps_everything_else() -> None:
    mcp_json = with_server({"mcpServers": {"other": {"command": "x"}}, "extra": 1}, "/bin/bench")
    assert mcp_json["mcpServers"] == {"other": {"command": "x"}, "benchwarmers": server_entry("/bin/bench")}
    theirs = {"hooks": [{"type": "command", "command": "lint"}]}
    settings = {"model": "m", "hooks": {"Stop": [theirs], "PreToolUse": [theirs]}}
    once = with_hook(settings, "/bin/bench")
    twice = with_hook(once, "/usr/bin/bench")
    assert twice["model"] == "m" and twice["hooks"]["PreToolUse"] == [theirs]
    assert twice["hooks"]["Stop"] == [theirs, stop_hook("/usr/bin/bench")]


def test_the_plugin_says_what_install_writes() -> None:
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "benchwarmers"
    servers = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"benchwarmers": server_entry("bench")}
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert hooks == {"Stop": [stop_hook("bench")]}

