"""`/openapi.json` of the gateway with the console beside it, as the stack serves them, is a valid OpenAPI
document (schemathesis's own loading validates it against the OpenAPI meta-schema) in which every operation
can be called: declared path parameters, a body for every POST, the statuses a route answers with their
schemas, and who may call (issue 24). Built without I/O."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
import schemathesis

from services.console.surface import Console
from services.gateway.app import create_app
from services.gateway.contract.bodies import BODIES
from services.gateway.contract.replies import ERRORS
from shared.bus_credentials import BusLogin
from shared.settings import GatewaySettings


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    app = create_app(GatewaySettings(port=8122), BusLogin("gateway", b"unused"), surfaces=[Console()])
    return app.openapi()


def test_the_document_is_valid_and_every_operation_loads(document: dict[str, Any]) -> None:
    schema = schemathesis.openapi.from_dict(document)
    schema.validate()
    loaded = list(schema.get_all_operations())
    assert len(loaded) >= 60
    assert all(type(result).__name__ == "Ok" for result in loaded), [str(r) for r in loaded]


def test_every_body_and_error_schema_is_valid_json_schema() -> None:
    for schema in [*BODIES.values(), *ERRORS.values()]:
        jsonschema.Draft202012Validator.check_schema(schema)


def test_every_operation_says_what_it_takes_and_answers(document: dict[str, Any]) -> None:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            where = f"{method.upper()} {path}"
            statuses = set(operation["responses"])
            assert "200" in statuses and (len(statuses) > 1 or path == "/health"), where
            assert "422" not in statuses, where  # the admin API answers 400
            if method == "post" and path not in ("/api/ledger/rebuild",):
                assert "requestBody" in operation, where
            for name in (
                part.strip("{}") for part in path.replace(":", "/").split("/") if part.startswith("{")
            ):
                assert any(
                    p["name"] == name and p["in"] == "path" for p in operation.get("parameters", [])
                ), where
            if path not in ("/health", "/login"):
                assert operation.get("security"), where
    assert {"AdminToken", "GatewayKey"} <= set(document["components"]["securitySchemes"])


def test_a_generation_body_the_document_allows_looks_like_each_formats_own_example() -> None:
    for schema in BODIES.values():
        for example in schema.get("examples", []):
            jsonschema.validate(example, schema)
