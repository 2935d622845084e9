"""What must not leave the caller in an error text: the provider key (SEC-6) and images (SEC-7)."""

from __future__ import annotations

import math
import re
from urllib.parse import urlsplit

from shared.commands import Msg

DATA_URL_RE = re.compile(r"data:[\w/+.-]+;base64,([A-Za-z0-9+/=]+)")
URL_RE = re.compile(r"https?://[^\s\"'<>)\]]+")
BASE64_RUN_RE = re.compile(r"[A-Za-z0-9+/=]{100,}")


def without_key(text: str, key: str | None) -> str:
    """Some providers echo the bearer back in a 401 body."""
    if not key or key not in text:
        return text
    return text.replace(key, "[redacted]")


def kilobytes(base64_chars: int) -> int:
    return math.ceil(base64_chars * 3 / 4 / 1000)


def stripped_url(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{parts.path}"


def without_images(text: str) -> str:
    """SEC-7: data URLs become placeholders, URLs lose query and userinfo, long base64 runs are summarised."""
    text = DATA_URL_RE.sub(lambda m: f"[image: data URL, {kilobytes(len(m.group(1)))} KB]", text)
    text = URL_RE.sub(lambda m: stripped_url(m.group(0)), text)
    return BASE64_RUN_RE.sub(lambda m: f"[base64, {kilobytes(len(m.group(0)))} KB]", text)


def has_images(messages: list[Msg]) -> bool:
    parts = (p for m in messages if isinstance(m.content, list) for p in m.content)
    return any(p.get("type") in ("image_url", "image") for p in parts)
