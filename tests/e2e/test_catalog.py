"""The catalog on a whole stack (C-15, CAT-1..CAT-4): a refresh asked on the admin API fetches the feeds a
local server plays, a model the catalog says calls tools takes route turns with tools though nobody typed
`--tools`, your own fact wins over it, a price on a free model raises `went paid` and the free-tier guard
holds the model, and Discover lists the model as on the bench."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import openai
import pytest

from cli.stack import Stack
from tests.e2e.conftest import CATALOG_PATHS, Admin
from tests.fakes.feeds import FeedServer, Reply

TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "look it up",
                                           "parameters": {"type": "object", "properties": {}}}}]


def models_dev(served: str, price: float) -> bytes:
    """models.dev's shape: the provider named like the bench's endpoint (`fake`) serves `served`."""
    entry = {"id": served, "name": served, "tool_call": True, "attachment": False, "reasoning": False,
             "modalities": {"input": ["text"], "output": ["text"]}, "knowledge": "2025-01",
             "cost": {"input": price, "output": price * 4}, "limit": {"context": 64000, "output": 8000}}
    return json.dumps({"fake": {"id": "fake", "name": "Fake", "npm": "@ai-sdk/openai-compatible",
                                "api": "http://127.0.0.1:9/v1", "models": {served: entry}}}).encode()


def serve(feeds: FeedServer, served: str, price: float) -> None:
    feeds.replies[CATALOG_PATHS["openrouter"]] = Reply(json.dumps({"data": [{"id": "other/model"}]}).encode())
    feeds.replies[CATALOG_PATHS["models_dev"]] = Reply(models_dev(served, price))
    feeds.replies[CATALOG_PATHS["freellmapi"]] = Reply(json.dumps({"providers": [
        {"id": "fake", "base_url": "http://127.0.0.1:9/v1", "models": [served]}]}).encode())


def route_turn(client: Any, collection: str) -> Any:
    return client.chat.completions.create(model=f"bench/{collection}:route", tools=TOOLS,
                                          messages=[{"role": "user", "content": "look something up"}])


def test_facts_from_the_catalog_seat_route_mode_and_a_price_holds_a_free_model(
    stack: Stack, catalog_feeds: FeedServer,
) -> None:
    admin, tag = Admin(stack.url), uuid.uuid4().hex[:6]
    plain, listed = admin.model(f"cat-plain-{tag}"), admin.model(f"cat-tools-{tag}")
    try:
        seated_by_facts(stack, catalog_feeds, admin, tag, plain, listed)
    finally:  # retired, so they never sit as explorers on other modules' panels
        for alias in (plain, listed):
            admin.post("/api/remove", {"alias": alias, "reason": "test over"})


def seated_by_facts(stack: Stack, catalog_feeds: FeedServer, admin: Admin, tag: str, plain: str,
                    listed: str) -> None:
    admin.collection(f"cat-{tag}", [plain, listed], reply="route")
    client = openai.OpenAI(base_url=stack.url + "/v1", api_key="unused", max_retries=0, timeout=60)
    with pytest.raises(openai.BadRequestError):
        route_turn(client, f"cat-{tag}")  # nobody is known to call tools yet

    serve(catalog_feeds, f"cat-tools-{tag}", 0.0)
    refreshed = admin.post("/api/catalog/refresh", {"force": True})
    assert listed in refreshed["changed"] and not refreshed["raised"]
    shown = admin.http.get("/api/model/facts", params={"alias": listed}).json()
    facts = {f["fact"]: f for f in shown["facts"]}
    assert facts["tools"] == {"fact": "tools", "value": True, "source": "models.dev"}
    assert facts["cost"]["value"] == {"input": 0.0, "output": 0.0}
    answered = route_turn(client, f"cat-{tag}")
    assert answered.model_extra["bench"]["alias"] == listed  # no --tools was ever typed

    mine = admin.post("/api/model/facts", {"alias": listed, "tools": False})
    assert {f["fact"]: f["source"] for f in mine["facts"]}["tools"] == "you"
    with pytest.raises(openai.BadRequestError) as refused:
        route_turn(client, f"cat-{tag}")
    assert "does not call tools (says you)" in str(refused.value)
    admin.post("/api/model/facts", {"alias": listed, "clear": ["tools"]})

    rows = admin.http.get("/api/discover", params={"free": "true"}).json()["rows"]
    row = next(r for r in rows if r["model"] == f"cat-tools-{tag}")
    # other modules' endpoints may reach the same fake provider: `fake` is the one it is on the bench through
    assert (row["reach"], row["free"], row["endpoints"][0]) == ("on bench", True, "fake")

    serve(catalog_feeds, f"cat-tools-{tag}", 0.5)
    priced = admin.post("/api/catalog/refresh", {"force": True})
    assert priced["raised"] == [f"model:paid:cat-tools-{tag}"]
    panel = httpx.post(stack.url + "/v1/chat/completions", timeout=60, json={
        "model": f"bench/cat-{tag}:all", "messages": [{"role": "user", "content": "hello"}]}).json()
    seats = {s["alias"]: s for s in panel["bench"]["seats"]}
    assert "free-tier guard holds" in seats[listed]["error"] and seats[plain]["status"] == "ok"
    status = admin.http.get("/api/catalog").json()
    assert {f["feed"]: f["error"] for f in status["feeds"]} == {"openrouter": "", "models.dev": "",
                                                                "freellmapi": ""}
