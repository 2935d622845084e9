"""The API contract (issue 24), checked by schemathesis against a whole stack of its own (the fuzzer writes
whatever the rules let through): every phase it offers (examples, coverage, fuzzing, stateful), every
check it runs by default (no 5xx, statuses and content types documented, replies fit their schemas, wrong
data refused, right data accepted, wrong methods 405 with `Allow`, auth enforced), over every operation of
`/openapi.json`, the formats' routes and the admin API alike. The run is the `st` command a client would
use, bounded by examples per operation; its JSON report is what the test reads.

Left out: adding an endpoint (its model list is fetched from the endpoint's base, and a fuzzed base must
never become traffic to an address off this machine); the ledger rebuild (it throws the ledger's tables away,
and while it folds the stream again every ledger view answers 503 by design, which the run counts as a
server error; two rebuilds at once also fail with 500, LedgerFileBusy).

Where "right data accepted" cannot hold from the document alone, the operation may also answer 400; each
is listed in `STATE_DEPENDENT` with why. The stack has no collection, so a generation is refused at
resolution (404) and never runs a panel.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cli.stack import Stack
from shared.natsserver import free_port
from tests.e2e.conftest import running
from tests.fakes.provider import FakeProvider

TOKEN = "contract-admin-token-0123456789"
EXAMPLES = 6
TIMEOUT_S = 260  # under the suite's 300 s per test, with the stack's start-up
# The refusal depends on what exists or on a grammar, and is not "no such thing" (404): no schema can say it,
# so these may also answer 400 to data the document allows. A write naming only things that do not exist is
# 404 (`rules.Missing`), which every operation may answer.
STATE_DEPENDENT = {
    "/api/alerts": "an alert's alias must be a model on the bench",
    "/api/collection": "members, merger and shadows must be models on the bench; a new collection needs one",
    "/api/gateway-key": "the name must be free and the collections it is scoped to must exist",
    "/api/model": "a new alias must be free (and the role one the model can take)",
    "/api/model/facts": "a write sets or clears at least one fact, and never one fact both ways",
    "/api/models": "the endpoint must exist and the alias be free",
    "/api/sql": "the text must be one read-only SELECT over the ledger's tables",
    "/api/report": "`until` must come after `since` (one parameter against the other)",
    "/api/suite/run": "a pass needs a model on the bench that is left to test, and the task it names",
    "/api/onboard-queue": "each item's endpoint must exist and list its served id, not yet on the bench",
    "/api/onboard": "the endpoint must exist and list the served id, not yet on the bench",
}

# The catalog refresh reads its feeds from a closed local port: never from the internet, and quickly refused.
NO_FEEDS = {f"BENCH_CATALOG_{feed}_URL": "http://127.0.0.1:9/" for feed in ("OPENROUTER", "MODELS_DEV",
                                                                            "FREELLMAPI")}

# What exists on the stack, for the fuzzer to name most of the time (names it makes up rarely exist).
DICTIONARIES = {"endpoints": ["fake"], "aliases": ["contract-a", "contract-b"], "sql": ["SELECT 1"]}
BINDINGS = {
    "/api/endpoint/default": {"name": "endpoints"}, "/api/endpoint/key": {"name": "endpoints"},
    "/api/endpoint/remove": {"name": "endpoints"}, "/api/endpoint/test": {"name": "endpoints"},
    "/api/models": {"endpoint": "endpoints"}, "/api/connection-limits": {"connection": "endpoints"},
    "/api/model": {"alias": "aliases"}, "/api/model-limits": {"alias": "aliases"},
    "/api/model-options": {"alias": "aliases"}, "/api/remove": {"alias": "aliases"},
    "/api/collection": {"members[*]": "aliases"}, "/api/alerts": {"alias": "aliases"},
    "/api/sql": {"sql": "sql"}, "/api/model/facts": {"alias": "aliases", "query.alias": "aliases"},
}


@pytest.fixture(scope="module")
def contract_stack(
    tmp_path_factory: pytest.TempPathFactory, provider: FakeProvider
) -> Iterator[tuple[Stack, str]]:
    home = tmp_path_factory.mktemp("contract")
    stack = Stack(
        home=home,
        port=free_port(),
        extra_env={"BENCHWARMERS_ADMIN_TOKEN": TOKEN, "BENCHWARMERS_KEY_FAKE": "sk-test-not-a-real-key",
                   **NO_FEEDS},
    )
    with running(stack):
        with httpx.Client(
            base_url=stack.url, headers={"authorization": f"Bearer {TOKEN}"}, timeout=60
        ) as admin:
            for path, body in (
                ("/api/endpoint", {"name": "fake", "base": provider.base_url}),
                ("/api/models", {"served": "contract-a", "endpoint": "fake"}),
                ("/api/models", {"served": "contract-b", "endpoint": "fake"}),
            ):
                assert admin.post(path, json=body).status_code == 200
            key = admin.post("/api/gateway-key", json={"name": "contract"}).json()["key"]
        yield stack, key


def config(key: str) -> str:
    """Schemathesis's configuration: credentials per security scheme, examples, the tuned operations."""
    lines = [
        f"[generation]\nmax-examples = {EXAMPLES}",
        f'[auth.openapi.AdminToken]\nbearer = "{TOKEN}"',
        f'[auth.openapi.GatewayKey]\nbearer = "{key}"',
        *(
            f'[auth.openapi.{name}]\napi_key = "{key}"'
            for name in ("GatewayKeyHeader", "GoogleKeyHeader", "GoogleKeyQuery")
        ),
    ]
    for name, values in DICTIONARIES.items():
        lines.append(f"[dictionaries.{name}]\nvalues = {json.dumps(values)}")
    for path in sorted({*BINDINGS, *STATE_DEPENDENT}):  # one entry per path: the first that matches applies
        entry = [f'[[operations]]\ninclude-path = "{path}"']
        if path in BINDINGS:
            pairs = ", ".join(f'"{field if "." in field else "body." + field}" = '
                              f'{{ dictionary = "{name}", probability = 0.8 }}'
                              for field, name in BINDINGS[path].items())
            entry.append(f"parameters = {{ {pairs} }}")
        if path in STATE_DEPENDENT:
            entry.append('[operations.checks.positive_data_acceptance]\n'
                         'expected-statuses = ["2xx", "3xx", "400", "401", "403", "404", "409", "429"]')
        lines.append("\n".join(entry))
    return "\n\n".join(lines) + "\n"


def run_schemathesis(stack: Stack, key: str, folder: Path) -> dict[str, Any]:
    document = httpx.get(f"{stack.url}/openapi.json", headers={"authorization": f"Bearer {TOKEN}"}).json()
    (folder / "openapi.json").write_text(json.dumps(document))
    (folder / "schemathesis.toml").write_text(config(key))
    report = folder / "report.json"
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("st")),
            "--config-file",
            str(folder / "schemathesis.toml"),
            "run",
            str(folder / "openapi.json"),
            "--url",
            stack.url,
            "--workers",
            "1",
            "--seed",
            "24",
            "--exclude-path",
            "/api/endpoint",
            "--exclude-path",
            "/api/ledger/rebuild",
            "--report",
            "json",
            "--report-json-path",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=folder,  # its cache of past failures stays with the run, not in the repository
        check=False,
    )
    assert report.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    result: dict[str, Any] = json.loads(report.read_text())
    result["output"] = done.stdout
    (folder / "output.txt").write_text(done.stdout)  # the whole run, for a failure's reader
    return result


def test_every_phase_and_check_passes_over_the_whole_api(
    contract_stack: tuple[Stack, str], tmp_path: Path
) -> None:
    stack, key = contract_stack
    report = run_schemathesis(stack, key, tmp_path)
    tail = report["output"][-6000:]
    assert report["failures"] == [], tail
    assert report["errors"] == [], tail
    assert {name: phase["status"] for name, phase in report["phases"].items()} == dict.fromkeys(
        ("examples", "coverage", "fuzzing", "stateful"), "success"
    ), tail
    assert report["operations"]["tested"] >= 59, report["operations"]
    assert report["warnings"]["low_valid_rate"] == [], report["warnings"]
    # Operations that mostly refused generated data: fewer than five, each one whose refusals depend on state.
    mostly_refused = {label.split(" ", 1)[1] for label in report["warnings"]["validation_mismatch"]}
    assert mostly_refused <= set(STATE_DEPENDENT) and len(mostly_refused) < 5, mostly_refused
