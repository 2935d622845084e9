"""A method a route does not take is 405 with `Allow`, in the error shape of the route's format (issue 24);
501 only for a method no HTTP server is expected to know. The app is built without its lifespan (no bus):
no route handler runs, only the routing, the guard and the fallback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

from services.console.surface import Console
from services.gateway import methods
from services.gateway.app import create_app
from shared.bus_credentials import BusLogin
from shared.settings import GatewaySettings

Shape = Callable[[int, Any], bool]


def openai(status: int, body: Any) -> bool:
    error = body["error"]
    return set(body) == {"error"} and error["code"] == status and error["type"] == "bench_gateway"


def responses(status: int, body: Any) -> bool:
    error = body["error"]
    return error["code"] == str(status) and error["type"] == "invalid_request_error" and "param" in error


def anthropic(status: int, body: Any) -> bool:
    return set(body) == {"type", "error"} and body["type"] == "error" and body["error"]["type"] == "api_error"


def ollama(status: int, body: Any) -> bool:
    return set(body) == {"error"} and isinstance(body["error"], str)


def gemini(status: int, body: Any) -> bool:
    return set(body["error"]) == {"code", "message", "status"} and body["error"]["code"] == status


def admin(status: int, body: Any) -> bool:
    return body["ok"] is False and isinstance(body["errors"], list) and len(body["errors"]) == 1


@pytest.fixture(scope="module")
def client() -> TestClient:
    app = create_app(GatewaySettings(port=8122), BusLogin("gateway", b"unused"), surfaces=[Console()])
    return TestClient(app, base_url="http://127.0.0.1:8122")


WRONG_METHODS = [
    # (format, method, path, shape, Allow)
    ("openai chat", "PUT", "/v1/chat/completions", openai, "POST, OPTIONS"),
    ("openai chat without /v1", "GET", "/chat/completions", openai, "POST, OPTIONS"),
    ("openai models", "DELETE", "/v1/models", openai, "GET, OPTIONS"),
    ("completions", "PATCH", "/v1/completions", openai, "POST, OPTIONS"),
    ("responses", "GET", "/v1/responses", responses, "POST, OPTIONS"),
    ("anthropic", "PUT", "/v1/messages", anthropic, "POST, OPTIONS"),
    ("anthropic count", "GET", "/v1/messages/count_tokens", anthropic, "POST, OPTIONS"),
    ("ollama chat", "GET", "/api/chat", ollama, "POST, OPTIONS"),
    ("ollama generate", "DELETE", "/api/generate", ollama, "POST, OPTIONS"),
    ("ollama tags", "POST", "/api/tags", ollama, "GET, OPTIONS"),
    ("gemini generate", "PUT", "/v1beta/models/m:generateContent", gemini, "POST, OPTIONS"),
    ("gemini model", "POST", "/v1beta/models/bench/m:merged", gemini, "GET, OPTIONS"),
    ("gemini list", "POST", "/v1beta/models", gemini, "GET, OPTIONS"),
    ("gemini on /v1", "PATCH", "/v1/models/m:streamGenerateContent", gemini, "POST, OPTIONS"),
    ("bench", "GET", "/bench/verdict", openai, "POST, OPTIONS"),
    ("admin api", "PUT", "/api/collections", admin, "GET"),
    ("admin api write", "GET", "/api/collection", admin, "POST"),
    ("admin alerts", "PUT", "/api/alerts/model:paid:x", admin, "DELETE"),
    ("health", "POST", "/health", admin, "GET"),
]


@pytest.mark.parametrize(("method", "path", "shape", "allow"), [w[1:] for w in WRONG_METHODS],
                         ids=[w[0] for w in WRONG_METHODS])
def test_a_method_the_route_does_not_take_is_405_with_allow_in_its_formats_shape(
    client: TestClient, method: str, path: str, shape: Shape, allow: str
) -> None:
    reply = client.request(method, path)  # no JSON body: a wrong method is told so, not asked for JSON
    assert reply.status_code == 405, (path, reply.text)
    assert reply.headers["allow"] == allow
    assert reply.headers["content-type"] == "application/json"
    assert shape(405, reply.json()), reply.json()
    assert method in next(iter(extract_messages(reply.json())))


def extract_messages(body: Any) -> list[str]:
    if "errors" in body:
        return list(body["errors"])
    error = body["error"]
    return [error if isinstance(error, str) else error["message"]]


def test_a_method_no_server_knows_is_501_and_an_unknown_path_still_404(client: TestClient) -> None:
    unknown = client.request("BREW", "/v1/chat/completions")
    assert unknown.status_code == 501 and openai(501, unknown.json())
    assert client.request("BREW", "/api/collections").status_code == 501
    assert client.put("/v1/nothing-here").status_code == 404
    assert client.delete("/api/nothing-here").json() == {"ok": False, "errors": ["unknown endpoint"]}


def test_a_preflight_without_origin_lists_the_paths_own_methods(client: TestClient) -> None:
    reply = client.options("/v1/messages")
    assert reply.status_code == 204 and reply.headers["allow"] == "POST, OPTIONS"
    assert client.options("/api/tags").headers["allow"] == "GET, OPTIONS"


def test_a_path_with_a_newline_is_still_answered_in_json(client: TestClient) -> None:
    reply = client.put("/api/alerts/a%0Ab")
    assert reply.status_code == 405 and reply.headers["allow"] == "DELETE"


def test_a_path_is_matched_against_the_routes_once_and_the_kept_answers_are_bounded() -> None:
    async def nothing(_: object) -> None: ...

    table = methods.MethodTable.of([Route("/v1/models/{name}", nothing, methods=["GET"]),
                                    Route("/v1/chat", nothing, methods=["POST"])], skip="/{rest:path}")
    assert table.allowed("/v1/chat", preflight=True) == ["POST", "OPTIONS"]
    assert table.allowed("/v1/chat") == ["POST"]  # the kept answer, without the preflight's OPTIONS
    assert table.allowed("/v1/models/x") == ["GET", "HEAD"] and table.allowed("/nowhere") == []
    assert set(table.known) == {"/v1/chat", "/v1/models/x", "/nowhere"}
    for n in range(methods.KNOWN_PATHS + 10):
        table.allowed(f"/made-up/{n}")
    assert len(table.known) == methods.KNOWN_PATHS and "/v1/chat" not in table.known
