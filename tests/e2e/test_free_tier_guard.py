"""A-90 (U-5) against a whole stack: a model on a `went paid` alert raised through the admin API is not
called (the fake provider never hears of it); its seat carries the guard's error and its usage line says
refused with no attempt; `allow_paid` naming it lets it be called, and so does clearing the alert. In route
mode a held member fails over like a pacing refusal. Alerts and the allow list through the API, the CLI
and the change log (C-16, C-17), and a retirement clearing its model's alerts (C-14).

Panel models are ad hoc (never explorers elsewhere); the route members cannot be, so they are retired at
the end, which also clears their alerts."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest

from cli.stack import Stack
from shared import subjects
from tests.e2e.conftest import events_on, wait_until
from tests.e2e.test_cli import bench
from tests.fakes.provider import FakeProvider

HELD, FINE = "ftg-held", "ftg-fine"
ROUTE_A, ROUTE_B = "ftg-route-a", "ftg-route-b"
PRICED = "listed with a price now ($0.15/M in)"
HOLDS = "Error: client failed: not sent: the free-tier guard holds"


def ok(reply: httpx.Response) -> dict[str, Any]:
    assert reply.status_code == 200, reply.text
    data: dict[str, Any] = reply.json()
    assert data["ok"] is True
    return data


def refused(reply: httpx.Response, status: int = 400) -> str:
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert body["ok"] is False and body["errors"], body
    return " | ".join(body["errors"])


def paid_key(served: str) -> str:
    return f"model:paid:{served}"


@pytest.fixture(scope="module")
def http(stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.url, timeout=120) as client:
        for served in (HELD, FINE):
            ok(client.post("/api/models", json={"served": served, "endpoint": "fake", "ad_hoc": True}))
        ok(client.post("/api/collection", json={"name": "ftg", "members": [HELD, FINE]}))
        yield client


def sent(provider: FakeProvider, served: str, marker: str) -> int:
    bodies = [r["body"] for r in provider.requests()]
    return sum(1 for body in bodies if body.get("model") == served and marker in str(body))


def ask_panel(http: httpx.Client, marker: str) -> dict[str, dict[str, Any]]:
    """The panel's seats by alias."""
    reply = http.post("/v1/chat/completions", json={
        "model": "bench/ftg", "messages": [{"role": "user", "content": f"check the price {marker}"}]})
    assert reply.status_code == 200, reply.text
    return {seat["alias"]: seat for seat in reply.json()["bench"]["seats"]}


def usage_of(http: httpx.Client, call: str, alias: str) -> dict[str, Any] | None:
    rows = ok(http.get("/api/usage", params={"alias": alias, "limit": 1000}))["rows"]
    return next((r for r in rows if r["call"] == call), None)


def test_a90_a_went_paid_model_is_not_called_until_allowed_or_cleared(
    http: httpx.Client, provider: FakeProvider
) -> None:
    key = paid_key(HELD)
    alert = ok(http.post("/api/alerts", json={
        "key": key, "kind": "went paid", "message": PRICED, "alias": HELD,
        "action": "check the provider; retire it or re-point it at a free slug"}))["alert"]
    assert (alert["kind"], alert["by"], alert["first_seen"]) == ("went paid", "local", alert["last_seen"])
    try:
        assert key in {a["key"] for a in ok(http.get("/api/alerts"))["alerts"]}

        marker = uuid.uuid4().hex
        seats = ask_panel(http, marker)
        held = seats[HELD]
        assert held["status"] == "error" and held["error"].startswith(f"{HOLDS} {HELD}")
        assert "payment required" in held["error"] and PRICED in held["error"]
        assert seats[FINE]["status"] == "ok"
        assert (sent(provider, HELD, marker), sent(provider, FINE, marker)) == (0, 1)
        line = usage_of(http, held["call"], HELD)
        assert line is not None
        assert (line["status"], line["attempts"], line["paced"]) == ("refused", 0, "refused")

        ok(http.post("/api/allow-paid", json={"allow_paid": [HELD]}))
        marker = uuid.uuid4().hex
        assert ask_panel(http, marker)[HELD]["status"] == "ok"
        assert sent(provider, HELD, marker) == 1

        assert ok(http.post("/api/allow-paid", json={"allow_paid": []}))["allow_paid"] == []
        marker = uuid.uuid4().hex
        assert ask_panel(http, marker)[HELD]["error"].startswith(HOLDS)
        assert sent(provider, HELD, marker) == 0
        again = ok(http.post("/api/alerts", json={"key": key, "message": "still priced"}))["alert"]
        assert again["first_seen"] == alert["first_seen"]
        assert datetime.fromisoformat(again["last_seen"]) > datetime.fromisoformat(alert["last_seen"])
    finally:
        assert ok(http.delete(f"/api/alerts/{key}"))["cleared"] == key

    marker = uuid.uuid4().hex
    assert ask_panel(http, marker)[HELD]["status"] == "ok"
    assert sent(provider, HELD, marker) == 1
    changes = [(c["kind"], c["name"], c["field"]) for c in ok(http.get("/api/changes"))["changes"]]
    assert ("alert", key, "cleared") in changes and ("alert", key, "went paid") in changes
    assert ("connections", "allow_paid", "allow_paid") in changes


def test_bad_alerts_and_allow_lists_are_refused_and_nothing_is_written(
    http: httpx.Client, stack: Stack
) -> None:
    assert stack.nats_url
    before = events_on(stack, subjects.CONFIG)
    assert "unknown kind 'pricey'" in refused(http.post("/api/alerts", json={
        "key": paid_key(HELD), "kind": "pricey", "message": "m"}))
    assert "is not an alert key" in refused(http.post("/api/alerts", json={"key": f"paid:{HELD}",
                                                                             "message": "m"}))
    assert "not 'retiring'" in refused(http.post("/api/alerts", json={
        "key": paid_key(HELD), "kind": "retiring", "message": "m"}))
    assert "message" in refused(http.post("/api/alerts", json={"key": paid_key(HELD)}))
    assert "no alert is up" in refused(http.delete(f"/api/alerts/{paid_key('nobody')}"), 404)
    assert "is not an alert key" in refused(http.delete("/api/alerts/whatever"))
    assert '"allow_paid"' in refused(http.post("/api/allow-paid", json={"allow_paid": ["two words"]}))
    assert events_on(stack, subjects.CONFIG) == before


def route_usage(http: httpx.Client, alias: str) -> list[dict[str, Any]]:
    rows = ok(http.get("/api/usage", params={"alias": alias, "purpose": "route", "limit": 1000}))["rows"]
    return rows


def test_a90_in_route_mode_a_held_member_fails_over_and_the_cli_drives_alerts(
    http: httpx.Client, stack: Stack, provider: FakeProvider
) -> None:
    url = stack.url
    for served in (ROUTE_A, ROUTE_B):
        ok(http.post("/api/models", json={"served": served, "endpoint": "fake"}))
    ok(http.post("/api/collection", json={"name": "ftg-route", "members": [ROUTE_A, ROUTE_B],
                                          "reply": "route"}))
    try:
        for served in (ROUTE_A, ROUTE_B):
            done = bench("alert", "raise", paid_key(served), "--message", PRICED, "--alias", served, url=url)
            assert done.returncode == 0, done.stderr
        listed = json.loads(bench("--json", "alerts", url=url).stdout)["alerts"]
        assert {paid_key(ROUTE_A), paid_key(ROUTE_B)} <= {a["key"] for a in listed}

        marker = uuid.uuid4().hex
        body = {"model": "bench/ftg-route", "messages": [{"role": "user", "content": f"fix it {marker}"}]}
        reply = http.post("/v1/chat/completions", json=body)
        assert reply.status_code == 502, reply.text  # both held: every member failed before a first piece
        message = reply.json()["error"]["message"]
        for served in (ROUTE_A, ROUTE_B):
            assert f"{served}: {HOLDS} {served}" in message
            assert sent(provider, served, marker) == 0
        assert "payment required" in message
        for served in (ROUTE_A, ROUTE_B):
            wait_until(lambda s=served: bool(route_usage(http, s)), what=f"{served}'s route usage line")
            (line,) = route_usage(http, served)
            assert (line["status"], line["attempts"], line["paced"]) == ("refused", 0, "refused")

        done = bench("alert", "allow-paid", ROUTE_A, ROUTE_B, url=url)
        assert done.returncode == 0 and f"{ROUTE_A}, {ROUTE_B}" in done.stderr, done.stderr
        marker = uuid.uuid4().hex
        body["messages"] = [{"role": "user", "content": f"fix it now {marker}"}]
        reply = http.post("/v1/chat/completions", json=body)
        assert reply.status_code == 200, reply.text
        answered = reply.json()["bench"]["alias"]
        assert sent(provider, answered, marker) == 1

        done = bench("alert", "clear", paid_key(ROUTE_A), url=url)
        assert done.returncode == 0 and f"cleared {paid_key(ROUTE_A)}" in done.stderr, done.stderr
    finally:
        assert bench("alert", "allow-paid", "--none", url=url).returncode == 0
        for served in (ROUTE_A, ROUTE_B):
            ok(http.post("/api/remove", json={"alias": served, "reason": "test done"}))
        ok(http.post("/api/collection/remove", json={"name": "ftg-route"}))
    left = {a["key"] for a in ok(http.get("/api/alerts"))["alerts"]}
    assert paid_key(ROUTE_B) not in left  # C-14: retiring the model cleared its alert
