"""Messages → (system, prompt) text (P-10), image placeholders (SEC-7) and the size estimate (P-5).

Text-only seats are asked this text, the call log keeps it and the size check measures it, so an image
is never written down: it becomes a placeholder naming its kind and size, or its URL without secrets.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

TOKENS_PER_IMAGE = 2_500
SYSTEM_ROLES = ("system", "developer")
DATA_URL_RE = re.compile(r"data:[\w/+.-]*;base64,[A-Za-z0-9+/=_-]*")
URL_RE = re.compile(r"https?://[^\s\"'<>)\]]+")
BASE64_RUN_RE = re.compile(r"[A-Za-z0-9+/=_-]{100,}")


@dataclass(frozen=True)
class Flat:
    system: str
    prompt: str
    images: int


def image_url_of(part: dict[str, Any]) -> str:
    """The URL of an OpenAI `image_url` part (`{"image_url": {"url": …}}` or a bare string)."""
    value = part.get("image_url")
    if isinstance(value, dict):
        value = value.get("url")
    return value if isinstance(value, str) else ""


def image_placeholder(url: str) -> str:
    """SEC-7: `[image: data URL, N KB]` or `[image: scheme://host/path]` (no userinfo, `?...` for a query)."""
    if url.startswith("data:"):
        payload = url.split(",", 1)[1] if "," in url else ""
        return f"[image: data URL, {math.ceil(len(payload) * 3 / 4 / 1000)} KB]"
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    where = f"{parts.scheme}://{host}{parts.path}"[:200]
    return f"[image: {where}{'?...' if parts.query else ''}]"


def without_images(text: str) -> str:
    """SEC-7 for free text (an error message): data URLs and URLs become placeholders, and any long
    base64-looking run is summarised, so no image byte or URL secret is written down."""
    text = DATA_URL_RE.sub(lambda m: image_placeholder(m.group(0)), text)
    text = URL_RE.sub(lambda m: image_placeholder(m.group(0)), text)
    return BASE64_RUN_RE.sub(lambda m: f"[base64, {math.ceil(len(m.group(0)) * 3 / 4 / 1000)} KB]", text)


def message_text(content: Any) -> tuple[str, int]:
    """A message's text (parts joined by a blank line, images as placeholders) and its image count."""
    if isinstance(content, str):
        return content, 0
    if not isinstance(content, list):
        return "", 0
    texts: list[str] = []
    images = 0
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "image_url":
            images += 1
            texts.append(image_placeholder(image_url_of(part)))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n\n".join(texts), images


def flatten(messages: list[dict[str, Any]]) -> Flat:
    """P-10: system = system/developer texts joined by a blank line; prompt = the one other turn's text,
    or `<role>: <text>` per turn joined by blank lines when there are several."""
    system: list[str] = []
    turns: list[tuple[str, str]] = []
    images = 0
    for msg in messages:
        text, count = message_text(msg.get("content"))
        images += count
        role = str(msg.get("role", ""))
        if role in SYSTEM_ROLES:
            system.append(text)
        else:
            turns.append((role, text))
    if len(turns) == 1:
        prompt = turns[0][1]
    else:
        prompt = "\n\n".join(f"{role}: {text}" for role, text in turns)
    return Flat(system="\n\n".join(system), prompt=prompt, images=images)


def estimate_text(text: str) -> int:
    """P-5: `max(1, int(chars / 4 × 1.1))` for non-empty text, 0 for empty."""
    return max(1, int(len(text) / 4 * 1.1)) if text else 0


def estimate_tokens(system: str, prompt: str, images: int = 0) -> int:
    text = f"{system}\n\n{prompt}" if system else prompt
    return estimate_text(text) + TOKENS_PER_IMAGE * images
