"""A fuzz run of the admin API from its own OpenAPI document (schemathesis): whatever a client sends, no
reply is a 5xx, and every reply fits the schema the API publishes for its status. Its own stack, since the
fuzzer writes whatever the rules let through.

Adding an endpoint is left out: its model list is fetched from the endpoint's base, and a fuzzed base must
never become traffic to an address off this machine. The ledger rebuild is left out for time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from cli.stack import Stack
from shared.natsserver import free_port
from tests.e2e.conftest import running
from tests.fakes.provider import FakeProvider

TOKEN = "fuzz-admin-token-0123456789"
ADMIN_PATHS = r"^/api/(?!chat$|generate$|tags$|show$|version$)"
EXAMPLES = 30
# A suite pass spends provider calls and holds the prober for minutes: its route is tested on its own.
SKIPPED = {("POST", "/api/endpoint"), ("POST", "/api/ledger/rebuild"), ("POST", "/api/suite/run")}
CHECKS = [not_a_server_error, response_schema_conformance, status_code_conformance, content_type_conformance]


@pytest.fixture(scope="module")
def fuzzed_stack(tmp_path_factory: pytest.TempPathFactory, provider: FakeProvider) -> Iterator[Stack]:
    home = tmp_path_factory.mktemp("fuzzed")
    stack = Stack(
        home=home,
        port=free_port(),
        extra_env={"BENCHWARMERS_ADMIN_TOKEN": TOKEN, "BENCHWARMERS_KEY_FAKE": "sk-test-not-a-real-key"},
    )
    with running(stack):
        with httpx.Client(
            base_url=stack.url, headers={"authorization": f"Bearer {TOKEN}"}, timeout=60
        ) as admin:
            for path, body in (
                ("/api/endpoint", {"name": "fake", "base": provider.base_url}),
                ("/api/models", {"served": "fuzz-a", "endpoint": "fake"}),
                ("/api/models", {"served": "fuzz-b", "endpoint": "fake"}),
                ("/api/collection", {"name": "fuzz", "members": ["fuzz-a"]}),
            ):
                assert admin.post(path, json=body).status_code == 200
        yield stack


def admin_operations(stack: Stack) -> list[Any]:
    """The admin API's operations, as the server's OpenAPI document describes them."""
    document = httpx.get(f"{stack.url}/openapi.json", headers={"authorization": f"Bearer {TOKEN}"}).json()
    schema = schemathesis.openapi.from_dict(document)
    operations: list[Any] = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
    return [
        op
        for op in operations
        if re.match(ADMIN_PATHS, op.path) and (op.method.upper(), op.path) not in SKIPPED
    ]


def fuzz(operation: Any, mode: GenerationMode, url: str) -> int:
    """How many calls were made (a bodiless GET has no wrong request to make: 0 in negative mode)."""
    calls = 0

    @given(case=operation.as_strategy(mode))
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def run(case: Any) -> None:
        nonlocal calls
        calls += 1
        case.call_and_validate(base_url=url, headers={"authorization": f"Bearer {TOKEN}"}, checks=CHECKS)

    try:
        run()
    except Unsatisfiable:
        assert mode == GenerationMode.NEGATIVE, operation.label
    except Exception as exc:
        raise AssertionError(f"{mode.value} {operation.label}: {exc}") from exc
    return calls


def test_no_5xx_and_every_reply_fits_its_schema(fuzzed_stack: Stack) -> None:
    """Requests that fit each operation's schema, and requests that break it."""
    operations = admin_operations(fuzzed_stack)
    assert len(operations) >= 20
    made = {op.label: sum(fuzz(op, mode, fuzzed_stack.url) for mode in GenerationMode) for op in operations}
    assert all(made.values()), made
    assert sum(made.values()) > len(operations) * EXAMPLES
