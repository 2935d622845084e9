"""The request bodies of the formats' routes, as far as they are ours to describe: the fields the gateway
reads, with the shapes it accepts (a body outside them is refused with 400 in the format's error shape).
Other fields are allowed: a panel passes over them, route mode hands them on. Pure data."""

from __future__ import annotations

from services.gateway.contract.shapes import (
    ABSENT,
    BASE64,
    COMMON,
    HTTP_URL,
    IMAGE_MIME,
    IMAGE_URL,
    MODEL,
    NULLABLE_TEXT,
    OBJECT,
    OLLAMA_BASE64,
    TEXT,
    Schema,
    obj,
    one_of,
    turns,
    typed,
)

NAME: Schema = {"type": "string", "minLength": 1}

# ---------------------------------------------------------------- OpenAI chat completions

CHAT_PART = one_of(
    typed("text", {"text": TEXT}, ("text",)),
    typed("image_url", {"image_url": one_of(IMAGE_URL, obj({"url": IMAGE_URL}, ("url",)))}, ("image_url",)),
)
CHAT_MESSAGE = obj(
    {
        "role": {"enum": ["system", "developer", "user", "assistant", "tool"]},
        "content": one_of(NULLABLE_TEXT, {"type": "array", "items": CHAT_PART}),
    },
    ("role",),
)
CHAT = obj(
    {
        "model": MODEL,
        "messages": turns(CHAT_MESSAGE),
        **COMMON,
        "tools": {"type": ["array", "null"]},
        "functions": ABSENT,
        "function_call": ABSENT,
    },
    ("model", "messages"),
    examples=[{"model": "bench/example", "messages": [{"role": "user", "content": "Say hi"}]}],
)

# ---------------------------------------------------------------- OpenAI completions

COMPLETIONS = obj(
    {
        "model": MODEL,
        "prompt": one_of(TEXT, {"type": "array", "items": TEXT, "minItems": 1, "maxItems": 1}),
        **COMMON,
    },
    ("model", "prompt"),
    examples=[{"model": "bench/example", "prompt": "Say hi"}],
)

# ---------------------------------------------------------------- OpenAI Responses

RESPONSES_PART = one_of(
    obj({"type": {"enum": ["input_text", "output_text", "text"]}, "text": TEXT}, ("type", "text")),
    typed("input_image", {"image_url": IMAGE_URL}, ("image_url",)),
)
RESPONSES_ITEM = one_of(
    obj(
        {
            "type": {"const": "message"},
            "role": {"enum": ["user", "assistant", "system", "developer"]},
            "content": one_of(TEXT, {"type": "array", "items": RESPONSES_PART}),
        },
        ("type", "role", "content"),
    ),
    typed("function_call", {"name": NAME, "call_id": NAME, "arguments": TEXT}, ("name", "call_id")),
    typed("function_call_output", {"call_id": NAME, "output": TEXT}, ("call_id", "output")),
)
RESPONSES = obj(
    {
        "model": MODEL,
        "input": one_of(TEXT, turns(RESPONSES_ITEM)),
        "instructions": NULLABLE_TEXT,
        **COMMON,
        "previous_response_id": ABSENT,
        "conversation": ABSENT,
    },
    ("model", "input"),
    examples=[{"model": "bench/example", "input": "Say hi"}],
)

# ---------------------------------------------------------------- Anthropic messages

ANTHROPIC_TEXT = typed("text", {"text": TEXT}, ("text",))
ANTHROPIC_IMAGE = typed(
    "image",
    {
        "source": one_of(
            typed("base64", {"media_type": IMAGE_MIME, "data": BASE64}, ("media_type", "data")),
            typed("url", {"url": IMAGE_URL}, ("url",)),
        )
    },
    ("source",),
)
ANTHROPIC_MESSAGE = one_of(
    obj(
        {
            "role": {"const": "user"},
            "content": one_of(TEXT, {"type": "array", "items": one_of(ANTHROPIC_TEXT, ANTHROPIC_IMAGE)}),
        },
        ("role", "content"),
    ),
    obj(
        {"role": {"const": "assistant"}, "content": one_of(TEXT, {"type": "array", "items": ANTHROPIC_TEXT})},
        ("role", "content"),
    ),
)
ANTHROPIC_SYSTEM = one_of(NULLABLE_TEXT, {"type": "array", "items": ANTHROPIC_TEXT})
ANTHROPIC = obj(
    {
        "model": MODEL,
        "max_tokens": {"type": "integer", "minimum": 1},
        "messages": turns(ANTHROPIC_MESSAGE),
        "system": ANTHROPIC_SYSTEM,
        **COMMON,
    },
    ("model", "max_tokens", "messages"),
    examples=[
        {"model": "bench/example", "max_tokens": 64, "messages": [{"role": "user", "content": "Say hi"}]}
    ],
)
ANTHROPIC_COUNT = obj(
    {
        "model": {"description": "read by no one: a count checks no collection"},
        "messages": turns(ANTHROPIC_MESSAGE),
        "system": ANTHROPIC_SYSTEM,
    },
    ("messages",),
    examples=[{"model": "bench/example", "messages": [{"role": "user", "content": "Say hi"}]}],
)

# ---------------------------------------------------------------- Ollama

OLLAMA_MESSAGE = obj(
    {
        "role": {"enum": ["system", "user", "assistant"]},
        "content": NULLABLE_TEXT,
        "images": {"type": ["array", "null"], "items": OLLAMA_BASE64},
    },
    ("role",),
)
OLLAMA_CHAT = obj(
    {"model": MODEL, "messages": turns(OLLAMA_MESSAGE), **COMMON, "options": {"type": ["object", "null"]}},
    ("model", "messages"),
    examples=[
        {"model": "bench/example", "messages": [{"role": "user", "content": "Say hi"}], "stream": False}
    ],
)
OLLAMA_GENERATE = obj(
    {
        "model": MODEL,
        "prompt": {"type": "string", "minLength": 1},
        "system": NULLABLE_TEXT,
        "images": {"type": ["array", "null"], "items": OLLAMA_BASE64},
        **COMMON,
        "context": ABSENT,
    },
    ("model", "prompt"),
    examples=[{"model": "bench/example", "prompt": "Say hi", "stream": False}],
)
OLLAMA_SHOW = obj(
    {"model": NAME, "name": NAME},
    examples=[{"model": "bench/example"}],
    anyOf=[{"required": ["model"]}, {"required": ["name"]}],
)

# ---------------------------------------------------------------- Gemini

# A part carries one kind of content: the first of these it has is the one read (snake_case spellings too).
PART_KINDS = (
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
)
SPELLINGS = {
    kind: (kind, "".join(f"_{c.lower()}" if c.isupper() else c for c in kind)) for kind in PART_KINDS
}


def only(kind: str, content: Schema) -> Schema:
    others = [{"required": [name]} for other in PART_KINDS if other != kind for name in SPELLINGS[other]]
    return obj({kind: content}, (kind,), not_={"anyOf": others})


GEMINI_PART = one_of(
    only("text", TEXT),
    only("inlineData", obj({"mimeType": IMAGE_MIME, "data": BASE64}, ("mimeType", "data"))),
    only(
        "fileData",
        obj({"mimeType": {"anyOf": [IMAGE_MIME, {"type": "null"}]}, "fileUri": HTTP_URL}, ("fileUri",)),
    ),
)
GEMINI_CONTENT = obj(
    {
        "role": {"enum": ["user", "model", "function", "", None]},
        "parts": {"type": "array", "items": GEMINI_PART},
    },
    ("parts",),
)
GEMINI_SYSTEM = one_of(
    NULLABLE_TEXT, obj({"parts": {"type": "array", "items": obj({"text": TEXT}, ("text",))}}, ("parts",))
)
GEMINI_GENERATE = obj(
    {
        "contents": one_of(turns(GEMINI_CONTENT), GEMINI_CONTENT),  # one content may come bare
        "systemInstruction": GEMINI_SYSTEM,
        "generationConfig": OBJECT,
        "with": COMMON["with"],
        "bench": COMMON["bench"],
    },
    ("contents",),
    examples=[{"contents": [{"role": "user", "parts": [{"text": "Say hi"}]}]}],
)

GEMINI_TURNS = {  # a count takes no contents too (it counts 0)
    "contents": one_of({"type": ["array", "null"], "items": GEMINI_CONTENT}, GEMINI_CONTENT),
    "systemInstruction": GEMINI_SYSTEM,
}
WRAPPED = {"required": ["generateContentRequest"], "properties": {"generateContentRequest": OBJECT}}
# H-G9: the contents, or a generateContentRequest object (then nothing beside it is read)
GEMINI_COUNT = one_of(
    obj(GEMINI_TURNS, not_=WRAPPED),
    obj({"generateContentRequest": obj(GEMINI_TURNS)}, ("generateContentRequest",)),
)
GEMINI_COUNT["examples"] = [{"contents": [{"role": "user", "parts": [{"text": "Say hi"}]}]}]
GEMINI_CALLS = ("generateContent", "streamGenerateContent", "countTokens")

# ---------------------------------------------------------------- /bench

VERDICT = obj(
    {
        "call": {"type": "string", "pattern": r"^p\d{8}-\d{6}-[0-9a-f]{4}\.[A-Za-z0-9_-]+$"},
        "useful": {"type": "boolean"},
        "note": TEXT,
        "real": {"type": "array", "items": TEXT},
        "false": {"type": "array", "items": TEXT},
    },
    ("call", "useful"),
)
PENDING = obj({"calls": {"type": "array", "items": TEXT}}, ("calls",), examples=[{"calls": []}])

BODIES: dict[str, Schema] = {
    "/v1/chat/completions": CHAT,
    "/chat/completions": CHAT,
    "/v1/completions": COMPLETIONS,
    "/completions": COMPLETIONS,
    "/v1/responses": RESPONSES,
    "/responses": RESPONSES,
    "/v1/messages": ANTHROPIC,
    "/v1/messages/count_tokens": ANTHROPIC_COUNT,
    "/api/chat": OLLAMA_CHAT,
    "/api/generate": OLLAMA_GENERATE,
    "/api/show": OLLAMA_SHOW,
    **{
        f"{prefix}/models/{{model}}:{call}": GEMINI_COUNT if call == "countTokens" else GEMINI_GENERATE
        for prefix in ("/v1beta", "/v1")
        for call in GEMINI_CALLS
    },
    "/bench/verdict": VERDICT,
    "/bench/pending": PENDING,
}
