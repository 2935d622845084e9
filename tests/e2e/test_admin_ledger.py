"""The ledger's views on the admin API against a whole stack (SPEC L-5, L-7; issue 5 item 5): usage rows of a
panel's seats, the quota view fed by a real 429 (quota record, learned limit, rest) and by saved limits,
read-only SQL; and collections' shadow members (issue 4 item 7).

The rate-limited model lives on an endpoint of its own (same fake provider, loopback: no key needed), so
its 30-minute rest and exhausted quota pace nobody else's calls on the session's stack."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from cli.stack import Stack
from tests.fakes.provider import FakeProvider

ENDPOINT = "adl-ep"
FINE, LIMITED, SHADOW = "adl-fine", "adl-limited", "adl-shadow"
REST_S = 1800  # the provider's stated wait: longer than any seat's deadline, so the bench stops asking


@dataclass
class Panel:
    http: httpx.Client
    id: str
    seats: list[dict[str, Any]]
    sent_before: dict[str, Any]


def ok(reply: httpx.Response) -> dict[str, Any]:
    assert reply.status_code == 200, reply.text
    data: dict[str, Any] = reply.json()
    assert data["ok"] is True
    return data


def errors(reply: httpx.Response, status: int = 400) -> str:
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert body["ok"] is False and body["errors"], body
    return " | ".join(body["errors"])


def sent_by_connection(quota: dict[str, Any]) -> dict[str, Any]:
    return {line["connection"]: line for line in quota["sent"]}


@pytest.fixture(scope="module")
def panel(stack: Stack, provider: FakeProvider) -> Iterator[Panel]:
    """One panel: a member that answers (on `fake`) and one the provider rate-limits (on its own endpoint)."""
    provider.set_model(LIMITED, behaviour="rate_limit", retry_after=REST_S, times=1)
    with httpx.Client(base_url=stack.url, timeout=120) as http:
        ok(http.post("/api/endpoint", json={"name": ENDPOINT, "base": provider.base_url}))
        for served, endpoint in ((FINE, "fake"), (LIMITED, ENDPOINT), (SHADOW, "fake")):
            ok(http.post("/api/models", json={"served": served, "endpoint": endpoint, "ad_hoc": True}))
        ok(http.post("/api/collection", json={"name": "adl-panel", "members": [FINE, LIMITED]}))
        sent_before = sent_by_connection(ok(http.get("/api/quota")))
        reply = http.post("/v1/chat/completions", json={
            "model": "bench/adl-panel", "messages": [{"role": "user", "content": "count the ledger"}],
        })
        assert reply.status_code == 200, reply.text
        bench = reply.json()["bench"]
        yield Panel(http, bench["panel"], bench["seats"], sent_before)


def usage(panel: Panel, **query: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = ok(panel.http.get("/api/usage", params={"limit": 1000, **query}))["rows"]
    return rows


def test_usage_lists_a_row_for_every_seat_of_the_panel(panel: Panel) -> None:
    rows = {r["call"]: r for r in usage(panel) if r["panel"] == panel.id}
    assert set(rows) == {s["call"] for s in panel.seats}
    by_alias = {r["alias"]: r for r in rows.values()}
    fine, limited = by_alias[FINE], by_alias[LIMITED]
    assert (fine["connection"], fine["purpose"], fine["status"]) == ("fake", "panel", "ok")
    assert fine["tokens_out"] > 0 and fine["attempts"] == 1 and fine["collection"] == "adl-panel"
    assert limited["connection"] == ENDPOINT and limited["status"] != "ok" and limited["attempts"] >= 1
    assert limited["http_status"] == 429
    assert "count the ledger" not in str(rows)  # a usage row never holds the prompt


def test_usage_filters_narrow_the_rows(panel: Panel) -> None:
    assert {r["alias"] for r in usage(panel, alias=FINE)} == {FINE}
    assert {r["connection"] for r in usage(panel, connection=ENDPOINT)} == {ENDPOINT}
    assert {r["purpose"] for r in usage(panel, purpose="panel")} == {"panel"}
    future = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    assert usage(panel, since=future) == []
    assert len(usage(panel, limit=1)) == 1
    assert "limit" in errors(panel.http.get("/api/usage", params={"limit": 0}))
    assert "since" in errors(panel.http.get("/api/usage", params={"since": "yesterday-ish"}))


def test_quota_shows_what_was_sent_and_what_the_429_taught(panel: Panel) -> None:
    quota = ok(panel.http.get("/api/quota"))
    sent = sent_by_connection(quota)
    on_endpoint = sum(r["attempts"] for r in usage(panel, connection=ENDPOINT))
    assert on_endpoint >= 1
    assert sent[ENDPOINT]["day"]["requests"] == sent[ENDPOINT]["month"]["requests"] == on_endpoint
    mine_on_fake = sum(r["attempts"] for r in usage(panel) if r["panel"] == panel.id
                       and r["connection"] == "fake")
    before = panel.sent_before.get("fake", {"day": {"requests": 0}})["day"]["requests"]
    assert sent["fake"]["day"]["requests"] - before >= mine_on_fake >= 1
    record = next(q for q in quota["quotas"] if (q["connection"], q["alias"]) == (ENDPOINT, LIMITED))
    assert record["metric"] == "requests" and record["left"] == 0 and record["of"] == 30
    resting = next(r for r in quota["resting"] if r["alias"] == LIMITED)
    assert resting["connection"] == ENDPOINT and resting["wait"] == "stated"
    assert REST_S // 60 - 2 <= resting["minutes_left"] <= REST_S // 60 + 1  # whole minutes, rounded up
    learned = next(line for line in quota["limits"]["learned"] if line["alias"] == LIMITED)
    assert (learned["axis"], learned["limit"], learned["enforced"]) == ("rpm", 30, True)
    limited_call = next(s["call"] for s in panel.seats if s["alias"] == LIMITED)
    assert learned["where"] == f"call {limited_call}"


def test_saved_limits_appear_under_limits_and_the_users_axis_wins(panel: Panel) -> None:
    ok(panel.http.post("/api/connection-limits", json={"connection": ENDPOINT, "limits": {"rpd": 5000}}))
    ok(panel.http.post("/api/model-limits", json={"alias": LIMITED, "limits": {"rpm": 20}}))
    limits = ok(panel.http.get("/api/quota"))["limits"]
    user = {(u["scope"], u["name"]): u for u in limits["user"]}
    assert user[("connection", ENDPOINT)]["rpd"] == 5000 and user[("connection", ENDPOINT)]["rpm"] is None
    assert user[("model", LIMITED)]["rpm"] == 20 and user[("model", LIMITED)]["by"] == "local"
    learned = next(line for line in limits["learned"] if line["alias"] == LIMITED)
    assert learned["enforced"] is False


def test_sql_answers_a_select_and_refuses_anything_else(panel: Panel) -> None:
    query = f"SELECT alias, purpose FROM usage WHERE panel = '{panel.id}' ORDER BY alias"
    result = ok(panel.http.post("/api/sql", json={"sql": query}))
    assert result["columns"] == ["alias", "purpose"] and result["types"] == ["VARCHAR", "VARCHAR"]
    assert [FINE, "panel"] in result["rows"] and [LIMITED, "panel"] in result["rows"]
    assert result["truncated"] is False
    capped = ok(panel.http.post("/api/sql", json={"sql": query, "max_rows": 1}))
    assert len(capped["rows"]) == 1 and capped["truncated"] is True
    assert "only SELECT" in errors(panel.http.post("/api/sql", json={"sql": "DELETE FROM usage"}))
    assert "one statement" in errors(panel.http.post("/api/sql", json={"sql": "SELECT 1; SELECT 2"}))
    assert errors(panel.http.post("/api/sql", json={"sql": "SELECT * FROM no_such_table"}))
    assert "max_rows" in errors(panel.http.post("/api/sql", json={"sql": "SELECT 1", "max_rows": "5"}))
    still = ok(panel.http.post("/api/sql", json={"sql": query}))
    assert still["rows"] == result["rows"]  # the refused DELETE changed nothing


def test_the_openapi_document_types_the_ledger_views(panel: Panel) -> None:
    paths = ok_document(panel.http)["paths"]
    for path, method, model in (("/api/quota", "get", "QuotaReply"), ("/api/usage", "get", "UsageReply"),
                                ("/api/sql", "post", "SqlReply")):
        answer = paths[path][method]["responses"]["200"]["content"]["application/json"]["schema"]
        assert answer["$ref"].endswith(f"/{model}"), (path, answer)
    assert "408" in paths["/api/sql"]["post"]["responses"]


def ok_document(http: httpx.Client) -> dict[str, Any]:
    reply = http.get("/openapi.json")
    assert reply.status_code == 200
    document: dict[str, Any] = reply.json()
    return document


def saved(http: httpx.Client, name: str) -> dict[str, Any]:
    collections = ok(http.get("/api/collections"))["collections"]
    found: dict[str, Any] = next(c for c in collections if c["name"] == name)
    return found


def test_a_collection_keeps_its_shadows_until_told_otherwise(panel: Panel) -> None:
    http = panel.http
    body = {"name": "adl-route", "members": [FINE], "reply": "route", "shadows": [SHADOW, SHADOW]}
    assert ok(http.post("/api/collection", json=body))["collection"]["shadows"] == [SHADOW]
    assert saved(http, "adl-route")["shadows"] == [SHADOW]
    ok(http.post("/api/collection", json={"name": "adl-route", "description": "agents"}))
    assert saved(http, "adl-route")["shadows"] == [SHADOW]  # not sent: kept
    why = errors(http.post("/api/collection", json={"name": "adl-route", "shadows": ["adl-nobody", FINE]}))
    assert "shadow 'adl-nobody' is not a model on the bench" in why
    assert saved(http, "adl-route")["shadows"] == [SHADOW]  # a refused save writes nothing
    assert '"shadows"' in errors(http.post("/api/collection", json={"name": "adl-route", "shadows": "x"}))
    ok(http.post("/api/collection", json={"name": "adl-route", "shadows": []}))
    assert saved(http, "adl-route")["shadows"] == []
    assert all("shadows" in c for c in ok(http.get("/api/collections"))["collections"])
