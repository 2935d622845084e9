"""The admin API's model, endpoint, collection, limit and change-log routes against a whole stack (SPEC
C-5, C-10, C-14, C-17, L-1, O-5, A-62, A-80, A-84, A-96). Models made here are ad hoc, so they never sit
as explorers on other modules' panels; the default endpoint is put back where it was."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cli.stack import Stack
from shared import subjects
from shared.config_rules.keys import key_hash
from shared.natsserver import free_port
from tests.e2e.conftest import events_on
from tests.fakes.provider import FakeProvider

PROVIDER_KEY = "sk-test-not-a-real-key"  # the e2e stack's BENCHWARMERS_KEY_FAKE


@pytest.fixture(scope="module")
def http(stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=60) as client:
        yield client


def ok(reply: httpx.Response) -> dict[str, Any]:
    assert reply.status_code == 200, reply.text
    data: dict[str, Any] = reply.json()
    assert data["ok"] is True
    return data


def errors(reply: httpx.Response, status: int = 400) -> str:
    assert reply.status_code == status, reply.text
    assert reply.json()["ok"] is False
    return " | ".join(reply.json()["errors"])


def model(http: httpx.Client, served: str, endpoint: str = "fake", **extra: Any) -> str:
    body = {"served": served, "endpoint": endpoint, "ad_hoc": True, **extra}
    alias: str = ok(http.post("/api/models", json=body))["model"]["alias"]
    return alias


def collection(http: httpx.Client, name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(
        c for c in ok(http.get("/api/collections"))["collections"] if c["name"] == name
    )
    return found


def test_a96_an_endpoint_whose_model_list_fails_is_not_saved(http: httpx.Client, stack: Stack) -> None:
    assert stack.nats_url
    before = events_on(stack, subjects.CONFIG)
    dead = f"http://127.0.0.1:{free_port()}/v1"
    why = errors(http.post("/api/endpoint", json={"name": "adr-dead", "base": dead}))
    assert "nothing was saved" in why and "BENCHWARMERS_KEY_ADR_DEAD" in why
    assert events_on(stack, subjects.CONFIG) == before
    assert "adr-dead" not in {e["name"] for e in ok(http.get("/api/endpoints"))["endpoints"]}


def test_a96_a_test_lists_and_saves_nothing_and_no_key_is_ever_returned_or_stored(
    http: httpx.Client, stack: Stack, provider: FakeProvider
) -> None:
    assert stack.nats_url
    before = events_on(stack, subjects.CONFIG)
    tested = ok(
        http.post("/api/endpoint", json={"name": "adr-test", "base": provider.base_url, "test": True})
    )
    assert tested["saved"] is False and tested["listing"]["count"] >= 0
    assert events_on(stack, subjects.CONFIG) == before
    key = ok(http.post("/api/endpoint/key", json={"name": "fake"}))
    assert key["stored"] is False and "BENCHWARMERS_KEY_FAKE" in key["message"]
    listed = ok(http.post("/api/endpoint/test", json={"name": "fake"}))
    for reply in (tested, key, listed, ok(http.get("/api/endpoints"))):
        assert PROVIDER_KEY not in json.dumps(reply)
    for path in stack.home.rglob("*"):
        if path.is_file():
            assert PROVIDER_KEY.encode() not in path.read_bytes(), path


def test_o5_an_endpoint_keeps_its_base_while_models_are_on_it(
    http: httpx.Client, provider: FakeProvider
) -> None:
    ok(http.post("/api/endpoint", json={"name": "adr-ep", "base": provider.base_url}))
    alias = model(http, "adr-ep-model", "adr-ep")
    moved = provider.base_url.replace("127.0.0.1", "localhost")
    assert "base cannot change" in errors(http.post("/api/endpoint", json={"name": "adr-ep", "base": moved}))
    assert "stays chat" in errors(
        http.post("/api/endpoint", json={"name": "adr-ep", "base": provider.base_url, "api": "gemini"})
    )
    assert "with_models" in errors(http.post("/api/endpoint/remove", json={"name": "adr-ep"}), 409)
    default = ok(http.get("/api/endpoints"))["default_endpoint"]
    try:
        ok(http.post("/api/endpoint/default", json={"name": "adr-ep"}))
        assert ok(http.get("/api/endpoints"))["default_endpoint"] == "adr-ep"
        assert "default endpoint" in errors(
            http.post("/api/endpoint/remove", json={"name": "adr-ep", "with_models": True})
        )
    finally:
        ok(http.post("/api/endpoint/default", json={"name": default}))
    removed = ok(http.post("/api/endpoint/remove", json={"name": "adr-ep", "with_models": True}))
    assert removed["retired"] == [alias]
    row = next(m for m in ok(http.get("/api/models"))["models"] if m["alias"] == alias)
    assert row["retired"] is True and "adr-ep" in row["retired_why"]
    assert "no longer exists" in errors(http.post("/api/restore", json={"alias": alias}))


def test_a84_retire_and_restore_follow_the_collections(http: httpx.Client) -> None:
    keep, gone, filler = (model(http, f"adr-84-{n}") for n in ("keep", "gone", "filler"))
    ok(http.post("/api/collection", json={"name": "adr-84-roomy", "members": [keep, gone], "merger": gone}))
    ok(http.post("/api/collection", json={"name": "adr-84-full", "members": [keep, gone]}))
    retired = ok(http.post("/api/remove", json={"alias": gone, "reason": "testing"}))["retired"]
    assert retired["collections"] == {"adr-84-roomy": ["members", "merger"], "adr-84-full": ["members"]}
    assert collection(http, "adr-84-roomy")["members"] == [keep]
    assert collection(http, "adr-84-roomy")["merger"] == ""
    again = {"served": "adr-84-x", "endpoint": "fake", "alias": gone, "ad_hoc": True}
    assert "retired" in errors(http.post("/api/models", json=again), 409)
    extra = [model(http, f"adr-84-extra{i}") for i in range(4)]
    ok(http.post("/api/collection", json={"name": "adr-84-full", "add": [filler, *extra][:4]}))  # now 5 of 5
    restored = ok(http.post("/api/restore", json={"alias": gone}))["model"]
    assert restored["alias"] == gone and restored["retired"] is False and restored["ad_hoc"] is True
    assert collection(http, "adr-84-roomy")["members"] == [keep, gone]
    assert collection(http, "adr-84-roomy")["merger"] == gone
    assert gone not in collection(http, "adr-84-full")["members"]  # no room there
    assert "not retired" in errors(http.post("/api/restore", json={"alias": gone}), 409)


def test_c5_a_rename_moves_the_alias_everywhere_and_the_old_one_is_never_reused(http: httpx.Client) -> None:
    old = model(http, "adr-rename-me", max_output=2000)
    ok(http.post("/api/collection", json={"name": "adr-rename", "members": [old], "merger": old}))
    renamed = ok(http.post("/api/model", json={"alias": old, "new_alias": "adr-renamed", "new_role": "code"}))
    assert (renamed["model"]["alias"], renamed["model"]["role"]) == ("adr-renamed", "code")
    assert collection(http, "adr-rename")["members"] == ["adr-renamed"]
    assert collection(http, "adr-rename")["merger"] == "adr-renamed"
    assert ok(http.get("/api/models"))["renamed"][old] == "adr-renamed"
    never = {"served": "adr-x2", "endpoint": "fake", "alias": old, "ad_hoc": True}
    assert "never reused" in errors(http.post("/api/models", json=never), 409)
    assert "taken" in errors(http.post("/api/model", json={"alias": "adr-renamed", "new_alias": old}), 409)
    assert "differs only by case" in errors(
        http.post("/api/model", json={"alias": "adr-renamed", "new_alias": old.upper()})
    )
    assert "nothing to change" in errors(
        http.post("/api/model", json={"alias": "adr-renamed", "new_role": "code"})
    )
    assert "cannot be a member" in errors(
        http.post("/api/model", json={"alias": "adr-renamed", "new_role": "image"})
    )
    assert (
        ok(http.post("/api/model", json={"alias": "adr-renamed", "new_ad_hoc": False}))["model"]["ad_hoc"]
        is False
    )
    assert (
        ok(http.post("/api/model", json={"alias": "adr-renamed", "new_ad_hoc": True}))["model"]["ad_hoc"]
        is True
    )
    options = ok(http.post("/api/model-options", json={"alias": "adr-renamed", "max_tokens": 1500}))
    assert options["model"]["max_tokens"] == 1500
    assert "above it" in errors(
        http.post("/api/model-options", json={"alias": "adr-renamed", "max_tokens": 4000})
    )
    cleared = ok(http.post("/api/model-options", json={"alias": "adr-renamed", "max_tokens": None}))
    assert cleared["model"]["max_tokens"] is None


def test_a80_a_collection_save_keeps_what_it_does_not_send(http: httpx.Client) -> None:
    a, b, c = (model(http, f"adr-80-{n}") for n in "abc")
    ok(
        http.post(
            "/api/collection",
            json={
                "name": "adr-80",
                "members": [a, b],
                "description": "kept",
                "tags": ["kept"],
                "reply": "merged",
                "merger": a,
            },
        )
    )
    saved = ok(http.post("/api/collection", json={"name": "adr-80", "add": [c], "remove": [b]}))["collection"]
    assert (saved["members"], saved["description"], saved["tags"], saved["reply"], saved["merger"]) == (
        [a, c],
        "kept",
        ["kept"],
        "merged",
        a,
    )
    assert "not members" in errors(http.post("/api/collection", json={"name": "adr-80", "remove": [b]}))
    assert "at least one member" in errors(http.post("/api/collection", json={"name": "adr-80-new"}))
    assert "unknown field(s): nope" in errors(
        http.post("/api/collection", json={"name": "adr-80", "nope": 1})
    )


def test_l1_limits_per_connection_and_per_model(http: httpx.Client) -> None:
    alias = model(http, "adr-limited")
    saved = ok(http.post("/api/connection-limits", json={"connection": "fake", "limits": {"rpm": 6000}}))
    assert saved["limits"]["rpm"] == 6000
    try:
        assert "not a connection" in errors(
            http.post("/api/connection-limits", json={"connection": "nowhere", "limits": {"rpm": 1}}), 404
        )
        assert "positive" in errors(
            http.post("/api/model-limits", json={"alias": alias, "limits": {"rpm": 0}})
        )
        assert "not rpmo" in errors(
            http.post("/api/model-limits", json={"alias": alias, "limits": {"rpmo": 5}})
        )
        ok(http.post("/api/model-limits", json={"alias": alias, "limits": {"rpd": 5000}}))
        listed = ok(http.get("/api/connections"))
        fake = next(c for c in listed["connections"] if c["name"] == "fake")
        assert fake["limits"]["rpm"] == 6000 and alias in fake["models"]
        assert {
            "alias": alias,
            "limits": {"rpm": None, "rpd": 5000, "tpm": None, "tpd": None, "rpmo": None},
        } in (listed["models"])
    finally:
        ok(http.post("/api/connection-limits", json={"connection": "fake", "limits": {}}))
        ok(http.post("/api/model-limits", json={"alias": alias, "limits": {}}))


def test_c17_the_change_log_says_who_changed_what_and_never_a_secret(http: httpx.Client) -> None:
    alias = model(http, "adr-logged")
    ok(http.post("/api/model", json={"alias": alias, "new_alias": "adr-logged-2"}))
    created = ok(http.post("/api/gateway-key", json={"name": "adr-log-key"}))
    changes = ok(http.get("/api/changes", params={"limit": 50}))["changes"]
    rename = next(c for c in changes if c["field"] == "alias" and c["old"] == alias)
    assert (rename["by"], rename["kind"], rename["new"]) == ("local", "model", "adr-logged-2")
    assert any(c["kind"] == "gateway key" and c["name"] == "adr-log-key" for c in changes)
    text = json.dumps(changes)
    assert created["key"] not in text and key_hash(created["key"]) not in text
    assert changes == sorted(changes, key=lambda c: c["seq"], reverse=True)


def test_a62_without_a_token_any_bearer_is_ignored_and_the_caller_is_local(
    http: httpx.Client, stack: Stack
) -> None:
    assert ok(http.get("/api/gateway-keys"))["required"] is False
    reply = http.get("/v1/models", headers={"authorization": "Bearer whatever-this-is"})
    assert reply.status_code == 200
    assert http.get("/api/status", headers={"authorization": "Bearer whatever-this-is"}).status_code == 200
    log = (stack.home / "logs" / "gateway-0.log").read_text()
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{") and '"http"' in line]
    assert any(line["path"] == "/v1/models" and line.get("who") == "local" for line in lines)
    assert "whatever-this-is" not in log
