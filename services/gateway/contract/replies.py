"""What the formats' routes answer: the error body of each format (H-1), and the 200 of the routes whose
reply is ours to describe (listings, token counts, `/bench/*`); a generation's 200 is the format's own
reply object, or its stream. Pure data."""

from __future__ import annotations

from services.gateway.contract.shapes import OBJECT, TEXT, Schema, obj

INTEGER: Schema = {"type": "integer"}


def closed(properties: Schema) -> Schema:
    return {"type": "object", "properties": properties, "required": list(properties)}


ERRORS: dict[str, Schema] = {
    "openai": closed(
        {"error": closed({"message": TEXT, "type": {"const": "bench_gateway"}, "code": INTEGER})}
    ),
    "responses": closed(
        {
            "error": closed(
                {
                    "message": TEXT,
                    "type": {"enum": ["invalid_request_error", "server_error"]},
                    "param": {"type": "null"},
                    "code": TEXT,
                }
            )
        }
    ),
    "anthropic": closed({"type": {"const": "error"}, "error": closed({"type": TEXT, "message": TEXT})}),
    "ollama": closed({"error": TEXT}),
    "gemini": closed({"error": closed({"code": INTEGER, "message": TEXT, "status": TEXT})}),
}
# Each format's error shape by its name in `services.gateway.formats`.
ERROR_OF_FORMAT = {
    "openai_chat": "openai",
    "completions": "openai",
    "responses": "responses",
    "anthropic": "anthropic",
    "ollama_chat": "ollama",
    "ollama_generate": "ollama",
    "gemini": "gemini",
}

TOGETHER = obj(
    {"context_window": {"type": ["integer", "null"]}, "capabilities": {"type": "array", "items": TEXT}}
)
MODEL_ROW = obj(
    {
        "id": TEXT,
        "object": {"const": "model"},
        "created": INTEGER,
        "owned_by": TEXT,
        "description": TEXT,
        "members": {"type": "array", "items": TEXT},
        "reply": {"enum": ["all", "merged", "route"]},
        "together": TOGETHER,
    },
    ("id", "object", "created", "owned_by"),
)
MODEL_LIST = obj(
    {"object": {"const": "list"}, "data": {"type": "array", "items": MODEL_ROW}}, ("object", "data")
)
GEMINI_MODEL = obj(
    {
        "name": TEXT,
        "baseModelId": TEXT,
        "version": TEXT,
        "displayName": TEXT,
        "description": TEXT,
        "inputTokenLimit": INTEGER,
        "supportedGenerationMethods": {"type": "array", "items": TEXT},
    },
    ("name", "supportedGenerationMethods"),
)
OLLAMA_DETAILS = obj({"family": TEXT, "families": {"type": "array", "items": TEXT}})
OLLAMA_TAG = obj(
    {
        "name": TEXT,
        "model": TEXT,
        "modified_at": TEXT,
        "size": INTEGER,
        "digest": TEXT,
        "details": OLLAMA_DETAILS,
    },
    ("name", "model", "modified_at", "size", "digest", "details"),
)
OLLAMA_SHOW = obj(
    {
        "modelfile": TEXT,
        "parameters": TEXT,
        "template": TEXT,
        "details": OLLAMA_DETAILS,
        "model_info": OBJECT,
        "modified_at": TEXT,
        "capabilities": {"type": "array", "items": TEXT},
    },
    ("modelfile", "details", "model_info", "capabilities"),
)
CHAT_REPLY = obj(
    {
        "id": TEXT,
        "object": {"const": "chat.completion"},
        "model": TEXT,
        "choices": {"type": "array"},
        "bench": OBJECT,
    },
    ("id", "object", "choices"),
)
COMPLETION_REPLY = obj(
    {"id": TEXT, "object": {"const": "text_completion"}, "choices": {"type": "array"}, "bench": OBJECT},
    ("id", "object", "choices"),
)
RESPONSE_REPLY = obj(
    {"id": TEXT, "object": {"const": "response"}, "status": TEXT, "output": {"type": "array"}},
    ("id", "object", "output"),
)
MESSAGE_REPLY = obj(
    {
        "id": TEXT,
        "type": {"const": "message"},
        "role": {"const": "assistant"},
        "content": {"type": "array"},
        "bench": OBJECT,
    },
    ("id", "type", "role", "content"),
)
OLLAMA_REPLY = obj(
    {"model": TEXT, "created_at": TEXT, "done": {"type": "boolean"}, "bench": OBJECT}, ("model", "created_at")
)
GEMINI_REPLY = obj(
    {"candidates": {"type": "array"}, "modelVersion": TEXT, "usageMetadata": OBJECT}, ("candidates",)
)

SSE = {"text/event-stream": {"schema": TEXT}}
NDJSON = {"application/x-ndjson": {"schema": TEXT}}

# The 200 of each route (by its path in the document): the JSON body, and the stream media type if it has one.
OK: dict[str, tuple[Schema, dict[str, Schema]]] = {
    "/v1/chat/completions": (CHAT_REPLY, SSE),
    "/chat/completions": (CHAT_REPLY, SSE),
    "/v1/completions": (COMPLETION_REPLY, SSE),
    "/completions": (COMPLETION_REPLY, SSE),
    "/v1/responses": (RESPONSE_REPLY, SSE),
    "/responses": (RESPONSE_REPLY, SSE),
    "/v1/messages": (MESSAGE_REPLY, SSE),
    "/v1/messages/count_tokens": (closed({"input_tokens": INTEGER}), {}),
    "/api/chat": (OLLAMA_REPLY, NDJSON),
    "/api/generate": (OLLAMA_REPLY, NDJSON),
    "/api/show": (OLLAMA_SHOW, {}),
    "/api/tags": (closed({"models": {"type": "array", "items": OLLAMA_TAG}}), {}),
    "/api/version": (closed({"version": TEXT}), {}),
    **{
        f"{prefix}/models/{{model}}:{call}": (GEMINI_REPLY, SSE)
        for prefix in ("/v1beta", "/v1")
        for call in ("generateContent", "streamGenerateContent")
    },
    **{
        f"{prefix}/models/{{model}}:countTokens": (closed({"totalTokens": INTEGER}), {})
        for prefix in ("/v1beta", "/v1")
    },
    "/v1beta/models": (closed({"models": {"type": "array", "items": GEMINI_MODEL}}), {}),
    "/v1beta/models/{model_id}": (GEMINI_MODEL, {}),
    "/v1/models": (MODEL_LIST, {}),
    "/models": (MODEL_LIST, {}),
    "/bench/verdict": (obj({"ok": {"const": True}, "recorded": {"type": ["object", "null"]}}, ("ok",)), {}),
    "/bench/pending": (closed({"pending": {"type": "array", "items": TEXT}}), {}),
    "/bench/record": (
        obj({"collection": TEXT, "task": TEXT, "aliases": OBJECT}, ("collection", "aliases")),
        {},
    ),
}
