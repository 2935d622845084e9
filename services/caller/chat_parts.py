"""Reading the canonical call's messages (OpenAI chat shape) so each provider kind can rebuild them. Pure."""

from __future__ import annotations

import json
import mimetypes
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from shared.commands import Msg

DATA_URL_RE = re.compile(r"^data:([\w/+.-]+);base64,(.*)$", re.DOTALL)
SYSTEM_ROLES = ("system", "developer")
DEFAULT_IMAGE_TYPE = "image/jpeg"


def content_text(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = (p.get("text") for p in content if isinstance(p, dict))
        return "".join(t for t in texts if isinstance(t, str))
    return ""


def text_of_parts(content: Any) -> str:
    """The `text` parts of a content joined (what a tool result carries to Anthropic and Gemini)."""
    return "".join(p.get("text", "") for p in parts_of(content) if p.get("type") == "text")


def parts_of(content: Any) -> list[dict[str, Any]]:
    """Content as a list of OpenAI parts (a plain string is one text part)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [p for p in content if isinstance(p, dict)]
    return []


@dataclass(frozen=True)
class Image:
    """An `image_url` part: inline bytes (base64) or a URL the provider fetches."""

    media_type: str
    data: str = ""  # base64, for a data URL
    url: str = ""  # for an http(s) URL


def image_of(part: dict[str, Any]) -> Image | None:
    if part.get("type") != "image_url":
        return None
    raw = part.get("image_url")
    url = raw.get("url") if isinstance(raw, dict) else raw
    if not isinstance(url, str) or not url:
        return None
    inline = DATA_URL_RE.match(url)
    if inline:
        return Image(media_type=inline.group(1), data=inline.group(2))
    guessed = mimetypes.guess_type(url.split("?", 1)[0])[0]
    is_image = bool(guessed and guessed.startswith("image/"))
    return Image(media_type=guessed if guessed and is_image else DEFAULT_IMAGE_TYPE, url=url)


def pieces_of(content: Any) -> list[Image | str]:
    """A content's images and non-empty texts in order: what each kind rebuilds its own parts from."""
    found: list[Image | str] = []
    for part in parts_of(content):
        image = image_of(part)
        if image is not None:
            found.append(image)
        elif part.get("type") == "text" and part.get("text"):
            found.append(part["text"])
    return found


def system_text(messages: list[Msg]) -> str:
    """System and developer messages joined: kinds other than chat take them apart from the turns."""
    texts = (content_text(m.content) for m in messages if m.role in SYSTEM_ROLES)
    return "\n\n".join(t for t in texts if t)


def turns(messages: list[Msg]) -> list[Msg]:
    return [m for m in messages if m.role not in SYSTEM_ROLES]


def alternating(said: Iterable[tuple[str, list[dict[str, Any]]]], key: str) -> list[dict[str, Any]]:
    """(role, pieces) turns as `{"role", key: pieces}` for kinds whose roles must alternate: empty turns
    are dropped and neighbours of one role merged."""
    out: list[dict[str, Any]] = []
    for role, pieces in said:
        if not pieces:
            continue
        if out and out[-1]["role"] == role:
            out[-1][key].extend(pieces)
        else:
            out.append({"role": role, key: pieces})
    return out


@dataclass(frozen=True)
class AskedTool:
    """A tool call an earlier assistant turn made (replayed in the conversation)."""

    id: str
    name: str
    arguments: str


def tool_calls_of(message: Msg) -> list[AskedTool]:
    raw = (message.model_extra or {}).get("tool_calls") or []
    found = []
    for item in raw if isinstance(raw, list) else []:
        function = (item.get("function") if isinstance(item, dict) else None) or {}
        if isinstance(function, dict) and function.get("name"):
            found.append(AskedTool(id=str(item.get("id", "")), name=str(function["name"]),
                                   arguments=str(function.get("arguments") or "{}")))
    return found


def tool_call_id(message: Msg) -> str:
    return str((message.model_extra or {}).get("tool_call_id") or "")


def arguments_object(arguments: str) -> dict[str, Any]:
    """Tool arguments as an object, as Anthropic and Gemini want them (a non-object is wrapped)."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {"arguments": arguments}
    return value if isinstance(value, dict) else {"value": value}


def function_tools(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The `function` of each OpenAI tool: {name, description?, parameters?}."""
    tools = options.get("tools")
    found = []
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            found.append(function)
    return found


def forced_tool(choice: Any) -> str | None:
    """The name in `tool_choice: {"type": "function", "function": {"name": …}}`."""
    if isinstance(choice, dict):
        function = choice.get("function") or {}
        name = function.get("name") if isinstance(function, dict) else None
        return name if isinstance(name, str) else None
    return None
