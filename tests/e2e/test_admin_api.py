"""The admin JSON API and the gateway's HTTP rules against a whole stack (C-2, C-5, C-10, C-11, C-14, H-2,
H-G15, SEC-6). Models made here are ad hoc, so they never sit as explorers on other modules' panels."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cli.stack import Stack
from shared import subjects
from tests.e2e.conftest import events_on
from tests.fakes.provider import FakeProvider


@pytest.fixture(scope="module")
def http(stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=60) as client:
        yield client


def refused(reply: httpx.Response, status: int = 400) -> list[str]:
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert body["ok"] is False
    errors: list[str] = body["errors"]
    return errors


def saved(reply: httpx.Response, kind: str) -> Any:
    """What an ok write answers under `kind` (the saved endpoint, model, collection…)."""
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["ok"] is True
    return body[kind]


def test_health(http: httpx.Client) -> None:
    assert http.get("/health").json() == {"ok": True}


def test_bodies_must_be_json_objects_within_the_limit(http: httpx.Client) -> None:
    assert refused(
        http.post("/api/collection", content=b"name=x", headers={"content-type": "text/plain"}), 415
    )
    assert refused(
        http.post("/api/collection", content=b"[1, 2]", headers={"content-type": "application/json"})
    ) == ["body must be a JSON object"]
    assert refused(
        http.post("/api/collection", content=b"{nope", headers={"content-type": "application/json"})
    ) == ["body is not JSON"]
    big = json.dumps({"name": "x" * 1_000_001}).encode()
    errors = refused(
        http.post("/api/collection", content=big, headers={"content-type": "application/json"}), 413
    )
    assert "the limit is 1,000,000" in errors[0]


def test_an_endpoint_never_takes_a_key(http: httpx.Client, stack: Stack) -> None:
    errors = refused(
        http.post(
            "/api/endpoint",
            json={"name": "keyed", "base": "https://k.example/v1", "key": "sk-live-do-not-store"},
        )
    )
    assert any("BENCHWARMERS_KEY_KEYED" in e for e in errors)
    assert "sk-live-do-not-store" not in json.dumps(errors)
    listed = http.get("/api/endpoints").json()
    assert listed["ok"] is True and "keyed" not in {e["name"] for e in listed["endpoints"]}
    assert "sk-live-do-not-store" not in (stack.home / "logs" / "gateway-0.log").read_text()


def test_an_endpoint_base_is_cleaned_and_its_kind_inferred(
    http: httpx.Client, provider: FakeProvider
) -> None:
    """O-5: only an endpoint whose model list answers is saved, so it points at the fake provider (hub
    inference from a `/api` base is covered by the rules' unit tests)."""
    local = saved(
        http.post("/api/endpoint", json={"name": "adm-local", "base": provider.base_url + "/"}), "endpoint"
    )
    assert (local["base"], local["kind"], local["api"]) == (provider.base_url, "local", "chat")


def test_aliases_follow_c5(http: httpx.Client) -> None:
    first = saved(
        http.post(
            "/api/models", json={"served": "vendor/adm-model:free", "endpoint": "fake", "ad_hoc": True}
        ),
        "model",
    )
    assert first["alias"] == "adm-model-free"
    clash = saved(
        http.post(
            "/api/models", json={"served": "other/adm-model:free", "endpoint": "adm-local", "ad_hoc": True}
        ),
        "model",
    )
    assert clash["alias"] == "adm-model-free-adm-local"
    errors = refused(
        http.post("/api/models", json={"served": "x/y", "endpoint": "fake", "alias": "ADM-MODEL-FREE"})
    )
    assert any("differs only by case" in e for e in errors)
    errors = refused(http.post("/api/models", json={"served": "x/y", "endpoint": "nowhere"}))
    assert any("endpoint 'nowhere' is not configured" in e for e in errors)


def test_a82_a_bad_collection_is_refused_with_every_reason_and_nothing_written(
    http: httpx.Client, stack: Stack
) -> None:
    assert stack.nats_url
    before = events_on(stack, subjects.CONFIG)
    errors = refused(
        http.post(
            "/api/collection",
            json={
                "name": "Bad Name",
                "members": ["adm-model-free", "nope"],
                "tags": [f"t{i}" for i in range(9)],
                "description": "d" * 301,
                "reply": "both",
                "merger": "nobody",
            },
        )
    )
    assert len(errors) == 6
    assert events_on(stack, subjects.CONFIG) == before
    assert refused(http.post("/api/collection", json={"name": "adm-empty", "members": []})) == [
        "a collection needs at least one member"
    ]
    members = []
    for i in range(6):
        members.append(
            saved(
                http.post("/api/models", json={"served": f"adm-six-{i}", "endpoint": "fake", "ad_hoc": True}),
                "model",
            )["alias"]
        )
    errors = refused(http.post("/api/collection", json={"name": "adm-six", "members": members}))
    assert any("more than max_calls (5)" in e for e in errors)


def test_a83_gateway_settings_refuse_out_of_range_and_below_a_collection(http: httpx.Client) -> None:
    models = [
        saved(
            http.post("/api/models", json={"served": f"adm-four-{i}", "endpoint": "fake", "ad_hoc": True}),
            "model",
        )["alias"]
        for i in range(4)
    ]
    saved(http.post("/api/collection", json={"name": "adm-four", "members": models}), "collection")
    assert refused(http.post("/api/gateway-settings", json={"max_calls": 11}))
    assert refused(http.post("/api/gateway-settings", json={"max_explorers": 3}))
    errors = refused(http.post("/api/gateway-settings", json={"max_calls": 3}))
    assert any("adm-four (4)" in e for e in errors)
    reply = http.post("/api/gateway-settings", json={"max_calls": 5, "max_explorers": 2})
    assert reply.status_code == 200 and reply.json()["settings"] == {"max_calls": 5, "max_explorers": 2}


def test_retiring_takes_a_model_out_of_its_collections_for_good(http: httpx.Client) -> None:
    keep = saved(
        http.post("/api/models", json={"served": "adm-keep", "endpoint": "fake", "ad_hoc": True}), "model"
    )["alias"]
    gone = saved(
        http.post("/api/models", json={"served": "adm-gone", "endpoint": "fake", "ad_hoc": True}), "model"
    )["alias"]
    saved(
        http.post("/api/collection", json={"name": "adm-retire", "members": [keep, gone], "merger": gone}),
        "collection",
    )
    retired = saved(http.post("/api/remove", json={"alias": gone, "reason": "stopped answering"}), "retired")
    assert retired == {
        "alias": gone,
        "why": "stopped answering",
        "collections": {"adm-retire": ["members", "merger"]},
    }
    collections = {c["name"]: c for c in http.get("/api/collections").json()["collections"]}
    assert (collections["adm-retire"]["members"], collections["adm-retire"]["merger"]) == ([keep], "")
    models = {m["alias"]: m for m in http.get("/api/models").json()["models"]}
    assert models[gone]["retired"] is True and models[gone]["retired_why"] == "stopped answering"
    errors = refused(
        http.post("/api/models", json={"served": "adm-other", "endpoint": "fake", "alias": gone}), 409
    )
    assert any("retired" in e for e in errors)
    assert refused(http.post("/api/remove", json={"alias": gone}), 409)


def test_a_removed_collection_leaves_the_model_list(http: httpx.Client) -> None:
    member = saved(
        http.post("/api/models", json={"served": "adm-solo", "endpoint": "fake", "ad_hoc": True}), "model"
    )["alias"]
    saved(http.post("/api/collection", json={"name": "bench/adm-gone", "members": [member]}), "collection")
    ids = {m["id"] for m in http.get("/v1/models").json()["data"]}
    assert {"bench/adm-gone", "bench/adm-gone:merged", "bench/adm-gone:route"} <= ids
    assert saved(http.post("/api/collection/remove", json={"name": "adm-gone"}), "removed") == "adm-gone"
    assert not any(
        i.startswith("bench/adm-gone") for i in (m["id"] for m in http.get("/v1/models").json()["data"])
    )


def test_unknown_routes_list_what_exists(http: httpx.Client) -> None:
    get = http.get("/v1/nothing")
    assert get.status_code == 404
    assert "GET /v1/models" in get.json()["error"]["message"]
    post = http.post("/v1/nothing", json={})
    assert post.status_code == 404
    assert "POST /v1/chat/completions" in post.json()["error"]["message"]
    assert http.post("/api/nothing", json={}).json() == {"ok": False, "errors": ["unknown endpoint"]}


def test_the_access_log_never_carries_a_query_string(http: httpx.Client, stack: Stack) -> None:
    assert (
        http.get("/v1/models/", params={"key": "bwk_secret_in_query"}).status_code == 200
    )  # trailing / ignored
    log = (stack.home / "logs" / "gateway-0.log").read_text()
    assert "bwk_secret_in_query" not in log
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{") and '"http"' in line]
    assert any(line.get("path") == "/v1/models" and line.get("status") == 200 for line in lines)


def test_the_ledger_can_be_rebuilt_from_the_admin_api(http: httpx.Client) -> None:
    reply = http.post("/api/ledger/rebuild", json={})
    assert reply.status_code == 200, reply.text
    assert reply.json()["ok"] is True
