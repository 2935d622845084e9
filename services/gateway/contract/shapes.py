"""JSON Schema building blocks shared by the request and reply descriptions. Pure data."""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

TEXT: Schema = {"type": "string"}
NULLABLE_TEXT: Schema = {"type": ["string", "null"]}
ABSENT: Schema = {"type": "null", "description": "not served by this gateway: leave it out (or null)"}
OBJECT: Schema = {"type": "object"}
# P-6: an image is an http(s) URL or a base64 data URL of an image; the gateway never fetches it.
# An http(s) URL whose host and port can be read: an RFC 3986 host name, a port up to 65535.
HOST = r"[A-Za-z0-9._~!$&'()*+,;=%-]+"
PORT = r"(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?"
HTTP = rf"https?://{HOST}{PORT}([/?#][\s\S]*)?$"
HTTP_URL: Schema = {"type": "string", "pattern": f"^{HTTP}"}
IMAGE_URL: Schema = {"type": "string", "pattern": rf"^({HTTP}|data:image/[A-Za-z0-9.+-]+;base64,)"}
IMAGE_MIME: Schema = {"type": "string", "pattern": r"^image/[A-Za-z0-9.+-]+$"}
BASE64: Schema = {"type": "string", "minLength": 1, "description": "base64 image bytes"}
OLLAMA_BASE64: Schema = {"type": "string", "pattern": r"^[A-Za-z0-9+/_-]+={0,2}$"}
# A collection, as every format names it: `bench/<collection>` with an optional `:<reply mode>`.
MODEL: Schema = {
    "type": "string",
    "pattern": r"^(bench/)?[A-Za-z0-9][A-Za-z0-9._-]{0,63}(:(all|merged|route))?$",
    "description": 'a collection: "bench/<collection>", optionally ":all", ":merged" or ":route"',
    "examples": ["bench/example"],
}
STREAM: Schema = {"type": ["boolean", "null"]}
WITH: Schema = {"type": ["array", "null"], "items": TEXT, "description": "model aliases to seat in the panel"}
BENCH: Schema = {
    "type": ["object", "null"],
    "properties": {"reply": {"enum": ["all", "merged", "route", None]}},
    "description": "how to answer: all answers side by side, merged into one, or routed to one member",
}
COMMON: Schema = {"stream": STREAM, "with": WITH, "bench": BENCH}


def obj(properties: Schema, required: tuple[str, ...] = (), **extra: Any) -> Schema:
    """An object with these properties; others are allowed (formats carry fields a panel passes over)."""
    schema: Schema = {
        "type": "object",
        "properties": properties,
        **{k.rstrip("_"): v for k, v in extra.items()},
    }
    if required:
        schema["required"] = list(required)
    return schema


def turns(item: Schema) -> Schema:
    """The turns a request asks about: a list of objects, not empty."""
    return {"type": "array", "items": item, "minItems": 1}


def one_of(*schemas: Schema) -> Schema:
    return {"oneOf": list(schemas)}


def typed(kind: str, properties: Schema, required: tuple[str, ...] = ()) -> Schema:
    """A block or part told apart by its `type`."""
    return obj({"type": {"const": kind}, **properties}, ("type", *required))
