"""Which paths are the gateway's (model clients) rather than the admin API's. Pure, so access rules and the
route fallback can share it without pulling in the web framework."""

from __future__ import annotations

OLLAMA_ROUTES = ("/api/chat", "/api/generate", "/api/tags", "/api/version", "/api/show")
GATEWAY_PREFIXES = ("/v1/", "/v1beta/", "/bench/")
# H-0: OpenAI clients configured without `/v1` in their base URL.
WITHOUT_V1 = ("/models", "/chat/completions", "/completions", "/responses")


def is_gateway_path(path: str) -> bool:
    return (
        path.startswith(GATEWAY_PREFIXES) or path in OLLAMA_ROUTES or path in WITHOUT_V1
        or path in ("/mcp", "/v1/mcp")
    )
