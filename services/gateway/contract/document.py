"""`/openapi.json`: FastAPI's document of the app, completed with what its handlers do but FastAPI cannot see
(issue 24): the formats' request bodies, path and query parameters, every status a route answers with its
error shape (H-1), and who may call (SEC-3, SEC-4). The admin API answers 400, never FastAPI's 422."""

from __future__ import annotations

import copy
from typing import Any

from services.gateway.access import is_gemini_path, route_kind
from services.gateway.contract.bodies import BODIES, GEMINI_CALLS
from services.gateway.contract.replies import ERROR_OF_FORMAT, ERRORS, OK
from services.gateway.contract.shapes import Schema
from services.gateway.errors_by_path import format_of
from shared.access import SESSION_COOKIE

SCHEMES: dict[str, Schema] = {
    "AdminToken": {
        "type": "http",
        "scheme": "bearer",
        "description": "the admin token (BENCHWARMERS_ADMIN_TOKEN)",
    },
    "AdminSession": {
        "type": "apiKey",
        "in": "cookie",
        "name": SESSION_COOKIE,
        "description": "POST /login sets it",
    },
    "GatewayKey": {"type": "http", "scheme": "bearer", "description": "a gateway key (bwk_…)"},
    "GatewayKeyHeader": {"type": "apiKey", "in": "header", "name": "x-api-key"},
    "GoogleKeyHeader": {"type": "apiKey", "in": "header", "name": "x-goog-api-key"},
    "GoogleKeyQuery": {"type": "apiKey", "in": "query", "name": "key"},
}
ADMIN_SECURITY: list[dict[str, list[str]]] = [{"AdminToken": []}, {"AdminSession": []}]
GATEWAY_SECURITY: list[dict[str, list[str]]] = [
    {"GatewayKey": []},
    {"GatewayKeyHeader": []},
    {"GoogleKeyHeader": []},
]
GEMINI_SECURITY = [*GATEWAY_SECURITY, {"GoogleKeyQuery": []}]

WHY = {
    400: "refused: the body or query does not fit",
    401: "a gateway key is needed, or this one is unknown",
    403: "not for this Host or Origin, or outside the key's collections",
    404: "no such collection or model",
    405: "this path does not take this method (see Allow)",
    413: "the body, or the prompt for every member, is too large",
    415: "the body is not JSON",
    429: "the key's requests a minute are used up",
    500: "the panel failed",
    501: "a reply mode not served",
    503: "a service the request needs is not running, or no member can be seated",
}
# 405: a path parameter that leads to another route's path (the route table answers for that path).
POST_STATUSES = (400, 401, 403, 404, 405, 413, 415, 429, 500, 501, 503)
GET_STATUSES = (400, 401, 403, 404, 405, 503)
# Gemini's calls are one route each under /v1beta and /v1 (`<model>:<method>`), documented per method as
# Google documents them. The model may name a reply mode (`bench/x:merged:generateContent`).
MODEL = {"type": "string", "pattern": r"^[^:]+(:(all|merged|route))?$", "examples": ["bench/example"]}
CALL_ROUTES = ("/v1beta/models/{target}", "/v1/models/{target}")
PARAMETERS: dict[str, list[Schema]] = {
    "/v1beta/models/{model_id}": [{"name": "model_id", "in": "path", "required": True, "schema": MODEL}],
    "/bench/record": [
        {"name": "collection", "in": "query", "required": True, "schema": {"type": "string", "minLength": 1}},
        {"name": "task", "in": "query", "required": False, "schema": {"type": "string"}},
    ],
}
MODEL_PARAMETER = {"name": "model", "in": "path", "required": True, "schema": MODEL}
ALT = {
    "name": "alt",
    "in": "query",
    "required": False,
    "schema": {"enum": ["sse", "json"]},
    "description": "sse: stream as server-sent events",
}
SAMPLE = {"{model}": "m", "{model_id}": "m"}


def split_calls(paths: dict[str, Any]) -> None:
    """Each Gemini call route as one path per method."""
    for route in CALL_ROUTES:
        item = paths.pop(route)
        for call in GEMINI_CALLS:
            operation = copy.deepcopy(item["post"])
            operation["operationId"] = f"{operation['operationId']}_{call}"
            operation["parameters"] = [MODEL_PARAMETER, *([ALT] if call == "streamGenerateContent" else [])]
            paths[route.replace("{target}", "{model}:" + call)] = {"post": operation}


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
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": BODIES[path]}},
        }


# H-2: every POST carries JSON, even one whose route reads no body.
NO_BODY = {
    "required": True,
    "content": {"application/json": {"schema": {}}},
    "description": "not read: {} will do",
}


def admin_operation(path: str, method: str, operation: dict[str, Any]) -> None:
    operation["responses"].pop("422", None)
    if method == "post":
        operation.setdefault("requestBody", NO_BODY)
    if route_kind(path) == "admin":
        operation["security"] = ADMIN_SECURITY


def completed(document: dict[str, Any]) -> dict[str, Any]:
    split_calls(document["paths"])
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if route_kind(concrete(path)) == "gateway":
                gateway_operation(path, method, operation)
            else:
                admin_operation(path, method, operation)
    components = document.setdefault("components", {})
    components["securitySchemes"] = SCHEMES
    schemas = components.get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return document
