"""Every API format the gateway speaks; each is one module implementing `formats.base.Format`."""

from __future__ import annotations

from services.gateway.formats.anthropic import Anthropic
from services.gateway.formats.base import Format
from services.gateway.formats.completions import Completions
from services.gateway.formats.gemini import Gemini
from services.gateway.formats.ollama import OllamaChat, OllamaGenerate
from services.gateway.formats.openai_chat import OpenAIChat
from services.gateway.formats.responses import Responses

# Also the shape of errors on routes that are no format's own (H-1: /bench/*, /v1/models, unknown routes).
OPENAI_CHAT = OpenAIChat()
FORMATS: tuple[Format, ...] = (
    OPENAI_CHAT, Completions(), Responses(), Anthropic(), OllamaChat(), OllamaGenerate(), Gemini(),
)
