"""Every API format the gateway speaks; each is one module implementing `formats.base.Format`."""

from __future__ import annotations

from services.gateway.formats.base import Format
from services.gateway.formats.openai_chat import OpenAIChat

# Also the shape of errors on routes that are no format's own (H-1: /bench/*, /v1/models, unknown routes).
OPENAI_CHAT = OpenAIChat()
FORMATS: tuple[Format, ...] = (OPENAI_CHAT,)
