"""The Claude Code side of `bench mcp`, without I/O: what the Stop hook reads from Claude Code and prints
back, and the project settings `bench mcp install` merges in (the same as the plugin in `plugin/`)."""

from __future__ import annotations

import json
from typing import Any

SERVER_KEY = "benchwarmers"
HOOK_MARK = "mcp stop-hook"


def hook_arguments(raw: str) -> dict[str, Any]:
    """Claude Code's Stop hook input → `pending_verdicts` arguments; {} when it is not a JSON object."""
    try:
        data = json.loads(raw or "{}")
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {"session": data.get("session_id"), "transcript": data.get("transcript_path"),
            "active": data.get("stop_hook_active")}


def hook_reply(tool_text: str) -> str:
    """The tool's reminder as a Stop hook answer Claude Code acts on: block the stop once, with the reminder
    as the reason (the tool names each seat once per session, so this cannot loop); "" to let it stop."""
    try:
        data = json.loads(tool_text) if tool_text.strip() else None
    except ValueError:
        return ""
    output = data.get("hookSpecificOutput") if isinstance(data, dict) else None
    context = output.get("additionalContext") if isinstance(output, dict) else None
    if not isinstance(context, str) or not context:
        return ""
    return json.dumps({"decision": "block", "reason": context})


def server_entry(bench: str) -> dict[str, Any]:
    """`.mcp.json`'s entry: `bench mcp` on stdio; the URL and key come from the environment Claude runs in."""
    return {"type": "stdio", "command": bench, "args": ["mcp"]}


def stop_hook(bench: str) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": f"{bench} {HOOK_MARK}", "timeout": 60}]}


def with_server(mcp_json: dict[str, Any], bench: str) -> dict[str, Any]:
    servers = dict(mcp_json.get("mcpServers") or {})
    servers[SERVER_KEY] = server_entry(bench)
    return {**mcp_json, "mcpServers": servers}


def with_hook(settings: dict[str, Any], bench: str) -> dict[str, Any]:
    """The settings with our Stop hook, once: an earlier one of ours is replaced, anyone else's kept."""
    hooks = dict(settings.get("hooks") or {})
    stops = [group for group in hooks.get("Stop") or []
             if not any(HOOK_MARK in str(h.get("command", "")) for h in group.get("hooks", []))]
    hooks["Stop"] = [*stops, stop_hook(bench)]
    return {**settings, "hooks": hooks}
