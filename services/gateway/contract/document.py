"""`/openapi.json`: FastAPI's document of the app, completed with what its handlers do but FastAPI cannot see
(issue 24): the formats' request bodies, path and query parameters, every status a route answers with its
error shape (H-1), and who may call (SEC-3, SEC-4). The admin API answers 400, never FastAPI's 422."""

from __future__ import annotations

from typing import Any

from services.gateway.access import SESSION_COOKIE, is_gemini_path, route_kind
from services.gateway.contract.bodies import BODIES
from services.gateway.contract.replies import ERROR_OF_FORMAT, ERRORS, OK
from services.gateway.contract.shapes import Schema
from services.gateway.errors_by_path import format_of

SCHEMES: dict[str, Schema] = {
    "AdminToken": {"type": "http", "scheme": "bearer", "description": "the admin token (BENCHWARMERS_ADMIN_TOKEN)"},
    "AdminSession": {"type": "apiKey", "in": "cookie", "name": SESSION_COOKIE, "description": "POST /login sets it"},
    "GatewayKey": {"type": "http", "scheme": "bearer", "description": "a gateway key (bwk_…)"},
    "GatewayKeyHeader": {"type": "apiKey", "in": "header", "name": "x-api-key"},
    "GoogleKeyHeader": {"type": "apiKey", "in": "header", "name": "x-goog-api-key"},
    "GoogleKeyQuery": {"type": "apiKey", "in": "query", "name": "key"},
}
ADMIN_SECURITY = [{"AdminToken": []}, {"AdminSession": []}]
GATEWAY_SECURITY = [{"GatewayKey": []}, {"GatewayKeyHeader": []}, {"GoogleKeyHeader": []}]
GEMINI_SECURITY = [*GATEWAY_SECURITY, {"GoogleKeyQuery": []}]

WHY = {
    400: "refused: the body or query does not fit", 401: "a gateway key is needed, or this one is unknown",
    403: "not for this Host or Origin, or outside the key's collections", 404: "no such collection or model",
    413: "the body, or the prompt for every member, is too large", 415: "the body is not JSON",
    429: "the key's requests a minute are used up", 500: "the panel failed", 501: "a reply mode not served",
    503: "a service the request needs is not running, or no member can be seated",
}
POST_STATUSES = (400, 401, 403, 404, 413, 415, 429, 500, 501, 503)
GET_STATUSES = (400, 401, 403, 404, 503)
# A Gemini route's path carries the model and the method: `<model>:generateContent` and the like.
TARGET = {"type": "string", "pattern": r"^[^:]+:(generateContent|streamGenerateContent|countTokens)$",
          "examples": ["bench/example:generateContent"]}
MODEL_ID = {"type": "string", "pattern": r"^[^:]+(:(all|merged|route))?$", "examples": ["bench/example"]}
PARAMETERS: dict[str, list[Schema]] = {
    "/v1beta/models/{target}": [
        {"name": "target", "in": "path", "required": True, "schema": TARGET},
        {"name": "alt", "in": "query", "required": False, "schema": {"enum": ["sse", "json"]},
         "description": "sse: stream as server-sent events"},
    ],
    "/v1beta/models/{model_id}": [
        {"name": "model_id", "in": "path", "required": True, "schema": MODEL_ID},
    ],
    "/bench/record": [
        {"name": "collection", "in": "query", "required": True, "schema": {"type": "string", "minLength": 1}},
        {"name": "task", "in": "query", "required": False, "schema": {"type": "string"}},
    ],
}
PARAMETERS["/v1/models/{target}"] = PARAMETERS["/v1beta/models/{target}"]
SAMPLE = {"{target}": "m:generateContent", "{model_id}": "m"}


def concrete(path: str) -> str:
    for name, value in SAMPLE.items():
        path = path.replace(name, value)
    return path


def error_reply(shape: Schema, why: str) -> Schema:
    return {"description": why, "content": {"application/json": {"schema": shape}}}


def gateway_operation(path: str, method: str, operation: dict[str, Any]) -> None:
    sample = concrete(path)
    shape = ERRORS[ERROR_OF_FORMAT[format_of(sample).name]]
    body, streams = OK[path]
    operation["security"] = GEMINI_SECURITY if is_gemini_path(sample) else GATEWAY_SECURITY
    operation["responses"] = {
        "200": {"description": "the answer", "content": {"application/json": {"schema": body}, **streams}},
        **{str(s): error_reply(shape, WHY[s]) for s in (POST_STATUSES if method == "post" else GET_STATUSES)},
    }
    if path in PARAMETERS:
        operation["parameters"] = PARAMETERS[path]
    if method == "post":
        operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": BODIES[path]}}}


def admin_operation(path: str, operation: dict[str, Any]) -> None:
    operation["responses"].pop("422", None)
    if route_kind(path) == "admin":
        operation["security"] = ADMIN_SECURITY


def completed(document: dict[str, Any]) -> dict[str, Any]:
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if route_kind(concrete(path)) == "gateway":
                gateway_operation(path, method, operation)
            else:
                admin_operation(path, operation)
    components = document.setdefault("components", {})
    components["securitySchemes"] = SCHEMES
    schemas = components.get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return document
