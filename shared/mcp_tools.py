"""The MCP server's contract, written once for both transports (MCP-1..MCP-3): its name, the instructions an
agent reads at `initialize`, and the four tools with their input schemas. The gateway serves them over
Streamable HTTP; `bench mcp` serves the same on stdio and forwards each call to a gateway. Plain data: no
SDK types here, so shared/ stays free of the MCP library."""

from __future__ import annotations

from typing import Any

SERVER_NAME = "benchwarmers"
SERVER_TITLE = "Benchwarmers"

INSTRUCTIONS = """\
Benchwarmers is a bench of LLMs you can ask for a second opinion while you work.

- `list_collections` shows the collections (panels) you may ask; `ask` puts one prompt to a collection and \
every seat answers side by side, each under its own call id (or merged into one answer with `merged`).
- Treat every seat's answer as a claim to check, not a fact: verify it against the real code, files, \
tests or documentation before you rely on it.
- Then send one `verdict` per seat, naming the seat by its call id: was the answer useful, and which of \
its concrete claims were real (you checked them true) and which were false. Judge every seat you were \
given, including the ones you did not use; an errored seat needs no verdict.
- Verdicts decide who sits on future panels, so be specific and honest.
- `pending_verdicts` is for a Stop hook: it reminds you of seats in this session that still wait for a \
verdict."""

ASK_STRINGS = {"type": "array", "items": {"type": "string"}}

TOOLS: tuple[dict[str, Any], ...] = (
    {
        "name": "list_collections",
        "title": "List collections",
        "description": "The collections you may ask: name, description, tags, members, explorers, shape, "
                       "reply mode, merger, context window, capabilities and limits.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "ask",
        "title": "Ask a panel",
        "description": "Ask a collection: every seat answers the prompt side by side, each with a call id to "
                       "send a verdict on. Returns the reply, then the seats as JSON.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "collection": {"type": "string", "description": "The collection: `core` or `bench/core`."},
                "prompt": {"type": "string", "description": "What to ask, with the context it needs."},
                "system": {"type": "string", "description": "An optional system prompt for every seat."},
                "merged": {"type": "boolean",
                           "description": "true: one merged answer; false: every answer side by side; "
                                          "unset: the collection's own reply mode."},
                "with": {**ASK_STRINGS, "description": "Aliases of models to seat as explorers."},
            },
            "required": ["collection", "prompt"],
        },
        "annotations": {"readOnlyHint": False, "openWorldHint": True},
    },
    {
        "name": "verdict",
        "title": "Record a verdict",
        "description": "Say whether one seat's answer was useful, with the claims you checked real or false.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "call": {"type": "string",
                         "description": "The seat's call id, e.g. p20260101-120000-ab12.member1."},
                "useful": {"type": "boolean", "description": "Did the answer help?"},
                "note": {"type": "string", "description": "Why, in a few words."},
                "real": {**ASK_STRINGS, "description": "Claims you checked and found true."},
                "false": {**ASK_STRINGS, "description": "Claims you checked and found untrue."},
            },
            "required": ["call", "useful"],
        },
        "annotations": {"readOnlyHint": False, "idempotentHint": False, "openWorldHint": False},
    },
    {
        "name": "pending_verdicts",
        "title": "Seats still owed a verdict",
        "description": "For a Stop hook: the seats named in this session's transcript that still have no "
                       "verdict, each reminded once per session. Empty text when nothing is owed.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "session": {"type": "string", "description": "The agent's session id."},
                "transcript": {"type": "string", "description": "The session's transcript (a .jsonl file)."},
                "active": {"type": ["string", "boolean"],
                           "description": "The hook's stop_hook_active: \"true\" answers empty text."},
                "calls": {**ASK_STRINGS,
                          "description": "Call ids to check instead of reading the transcript (`bench mcp` "
                                         "reads it on the agent's machine and sends these)."},
            },
        },
        "annotations": {"readOnlyHint": False, "openWorldHint": False},
    },
)

TOOL_NAMES = tuple(tool["name"] for tool in TOOLS)
