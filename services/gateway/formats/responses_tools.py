"""The tools of a Responses request as a chat member takes them (RM-5, X-2).

`function` tools pass as they are; a `custom` tool becomes a function taking one string `input`; a
`namespace` (Codex's multi-agent tools, its MCP servers) is flattened into its members, each renamed
`<namespace>__<name>`, and the `ToolOffer` remembers the pair so the member's calls go back to the agent
under the namespace and name it declared. Hosted tools (web search, image generation, file search, code
interpreter, computer use, …) run at a vendor, so no member can honour them: they are left out and named,
and route mode says so in a header. A namespace with no tools or two tools that end up with one name is
refused: a member is never asked with a broken tool list.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from services.gateway.formats.canonical import function_tool
from shared.refusal import Refusal

CUSTOM_PARAMETERS = {"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]}
SEPARATOR = "__"
NAME_LIMIT = 64  # OpenAI's longest function name; longer flattened names are shortened with a hash
MEMBER_KINDS = ("function", "custom")


@dataclass(frozen=True)
class ToolOffer:
    """The tools a member is offered, and what the route encoder needs to answer in the agent's terms."""

    tools: list[dict[str, Any]] = field(default_factory=list)  # OpenAI chat tools
    custom: frozenset[str] = frozenset()  # names (as the member sees them) of custom tools
    namespaced: dict[str, tuple[str, str]] = field(default_factory=dict)  # flat name → (namespace, name)
    dropped: tuple[str, ...] = ()  # the hosted tool types left out, each once, in order
    declared: bool = False  # the request declared tools at all (X-1: a panel refuses them, even hosted)


def flat_name(namespace: str, name: str) -> str:
    """`<namespace>__<name>` (no second separator when the namespace already ends in one, as Codex's MCP
    namespaces `mcp__<server>__` do); past 64 characters, cut and made unique by a hash of the whole."""
    joined = namespace + name if namespace.endswith(SEPARATOR) else namespace + SEPARATOR + name
    if len(joined) <= NAME_LIMIT:
        return joined
    digest = hashlib.sha256(joined.encode()).hexdigest()[:8]
    return f"{joined[:NAME_LIMIT - 9]}_{digest}"


def tool_name(where: str, tool: Mapping[str, Any]) -> str:
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise Refusal(400, f'{where}: a {tool.get("type")} tool needs a "name" (a non-empty string)')
    return name


def chat_tool(tool: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A `function` or `custom` tool as an OpenAI chat function called `name`."""
    if tool.get("type") == "function":
        chat = function_tool(name, tool.get("description"), tool.get("parameters"))
        if isinstance(tool.get("strict"), bool):
            chat["function"]["strict"] = tool["strict"]
        return chat
    description = tool.get("description") or ""
    grammar = tool.get("format")
    grammar = grammar if isinstance(grammar, dict) else {}
    if grammar.get("type") == "grammar":
        syntax, definition = grammar.get("syntax"), grammar.get("definition")
        description += f"\n\nThe input must follow this {syntax} grammar:\n{definition}"
    return function_tool(name, description.strip(), CUSTOM_PARAMETERS)


class OfferBuilder:
    def __init__(self) -> None:
        self.tools: list[dict[str, Any]] = []
        self.custom: set[str] = set()
        self.namespaced: dict[str, tuple[str, str]] = {}
        self.dropped: dict[str, None] = {}
        self.placed: dict[str, str] = {}  # flat name → where it was declared

    def add(self, where: str, tool: Mapping[str, Any], name: str, shown: str) -> None:
        if name in self.placed:
            raise Refusal(400, f'tools: two tools are both called "{name}" once namespaces are flattened '
                               f'into "<namespace>__<name>" ({self.placed[name]} and {where} {shown}); '
                               "tool names must be unique")
        self.placed[name] = f"{where} {shown}"
        self.tools.append(chat_tool(tool, name))
        if tool.get("type") == "custom":
            self.custom.add(name)

    def namespace(self, where: str, tool: Mapping[str, Any]) -> None:
        namespace = tool_name(where, tool)
        members = tool.get("tools")
        if not isinstance(members, list) or not members:
            raise Refusal(400, f'{where}: the namespace "{namespace}" has no tools (its "tools" must be a '
                               "non-empty list of function and custom tools)")
        for index, member in enumerate(members):
            at = f"{where}.tools[{index}]"
            kind = member.get("type") if isinstance(member, dict) else None
            if kind not in MEMBER_KINDS:
                raise Refusal(400, f'{at}: a namespace can hold only "function" and "custom" tools (got '
                                   f"{json.dumps(kind)})")
            name = tool_name(at, member)
            flat = flat_name(namespace, name)
            self.add(at, member, flat, f"({namespace}.{name})")
            self.namespaced[flat] = (namespace, name)

    def offer(self, raw: list[Any]) -> ToolOffer:
        for index, tool in enumerate(raw):
            where = f"tools[{index}]"
            kind = tool.get("type") if isinstance(tool, dict) else None
            if not isinstance(tool, dict) or not isinstance(kind, str):
                raise Refusal(400, f'{where} must be a tool object with a "type"')
            if kind in MEMBER_KINDS:
                name = tool_name(where, tool)
                self.add(where, tool, name, f'("{name}")')
            elif kind == "namespace":
                self.namespace(where, tool)
            else:  # hosted at a vendor; route mode names it in X-Bench-Dropped-Tools
                self.dropped[kind] = None
        return ToolOffer(self.tools, frozenset(self.custom), self.namespaced, tuple(self.dropped), bool(raw))


def tool_offer(body: Mapping[str, Any]) -> ToolOffer:
    """The request's `tools` as a member is offered them (an empty list or none: no tools)."""
    raw = body.get("tools")
    if raw is None:
        return ToolOffer()
    if not isinstance(raw, list):
        raise Refusal(400, '"tools" must be a list')
    return OfferBuilder().offer(raw)


def tool_choice(choice: Any) -> Any:
    """`auto`/`none`/`required`, or one named tool (in a namespace: its flattened name); else not passed."""
    if choice in ("auto", "none", "required"):
        return choice
    if not isinstance(choice, dict) or choice.get("type") not in ("function", "custom"):
        return None
    name, namespace = choice.get("name"), choice.get("namespace")
    if not isinstance(name, str) or not name:
        return None
    if isinstance(namespace, str) and namespace:
        name = flat_name(namespace, name)
    return {"type": "function", "function": {"name": name}}
