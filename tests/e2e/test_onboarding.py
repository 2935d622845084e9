"""Onboarding through the whole stack and the real `bench` (O-1..O-4, A-94): a model the endpoint lists is
queued, registered and probed while `--wait` draws the progress events; a served id it does not list is
refused with near matches; the same id twice, or a registered one, refuses the whole batch; candidates
list what is served and not on the bench. Models are onboarded `--quick --ad-hoc`, so they never sit as
explorers on other modules' panels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from cli.stack import Stack
from tests.e2e.conftest import CATALOG_PATHS, Admin
from tests.e2e.test_catalog import TOOLS
from tests.e2e.test_panel_rules import DATA_URL
from tests.fakes.feeds import FeedServer, Reply
from tests.fakes.provider import FakeProvider

ROOT = Path(__file__).resolve().parents[2]


def bench(*args: str, url: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """This tree's `bench` (python -m cli.main), with no terminal."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("BENCHWARMERS_")}
    full.update({"BENCHWARMERS_URL": url, **(env or {})})
    return subprocess.run([sys.executable, "-m", "cli.main", *args], input="", capture_output=True, text=True,
                          env=full, timeout=120, cwd=ROOT)


def test_a_model_is_onboarded_with_its_progress_drawn(stack: Stack, provider: FakeProvider) -> None:
    provider.set_model("vendor/onboard-e2e", latency_ms=50)
    done = bench("onboard", "vendor/onboard-e2e", "--endpoint", "fake", "--quick", "--ad-hoc", "--wait",
                 url=stack.url, env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    drawn = "vendor/onboard-e2e: done (4 of 4 probe calls answered; suite skipped (quick-adhoc))"
    assert drawn in done.stderr
    models = Admin(stack.url).http.get("/api/models").json()["models"]
    row = next(m for m in models if m["served"] == "vendor/onboard-e2e")
    assert row["alias"] == "onboard-e2e"
    status = bench("--json", "onboard", "status", url=stack.url)
    assert '"state":"done"' in status.stdout.replace(" ", "")
    onboarding = Admin(stack.url).http.get("/api/status").json()["onboarding"]
    assert onboarding == {"running": False, "items": 1}
    again = bench("onboard", "vendor/onboard-e2e", "vendor/onboard-e2e-2", "--endpoint", "fake", "--quick",
                  url=stack.url)
    assert again.returncode == 1
    assert "'vendor/onboard-e2e' on 'fake' is already registered as 'onboard-e2e'" in again.stderr


def test_a94_a_served_id_not_listed_or_picked_twice_refuses_the_batch_with_near_matches(
    stack: Stack, provider: FakeProvider
) -> None:
    provider.set_model("vendor/near-e2e")
    refused = bench("onboard", "vendor/near-e2", "vendor/near-e2e", "vendor/near-e2e", "--endpoint", "fake",
                    url=stack.url)
    assert refused.returncode == 1
    assert "fake does not list 'vendor/near-e2'; near matches: vendor/near-e2e" in refused.stderr
    assert "'vendor/near-e2e' on 'fake' is picked twice" in refused.stderr
    assert bench("onboard", "x", "--ad-hoc", "--endpoint", "fake", url=stack.url).returncode == 2
    listed = bench("--json", "candidates", url=stack.url)
    assert listed.returncode == 0
    # other modules' endpoints may list the same fake provider: the candidate on `fake` is the one dismissed
    [key] = [c["key"] for c in json.loads(listed.stdout)["candidates"]
             if (c["served"], c["endpoint"]) == ("vendor/near-e2e", "fake")]
    hidden = bench("dismiss", key, url=stack.url)
    assert hidden.returncode == 0
    after = Admin(stack.url).http.get("/api/candidates").json()
    assert key in [c["key"] for c in after["dismissed"]]
    assert key not in [c["key"] for c in after["candidates"]]


def feed_entry(served: str, tools: bool, vision: bool) -> dict[str, Any]:
    return {"id": served, "name": served, "tool_call": tools, "attachment": vision, "reasoning": False,
            "modalities": {"input": ["text", "image"] if vision else ["text"], "output": ["text"]},
            "cost": {"input": 0.0, "output": 0.0}, "limit": {"context": 64000, "output": 8000}}


def test_an_onboarded_model_sits_in_route_mode_and_image_panels_exactly_when_its_facts_say_so(
    stack: Stack, provider: FakeProvider, catalog_feeds: FeedServer
) -> None:
    """C-15 through O-1: no `--tools` or `--vision` is typed; the catalog's facts decide at registration."""
    tag = uuid.uuid4().hex[:6]
    able, plain = f"vendor/ob-able-{tag}", f"vendor/ob-plain-{tag}"
    models = {able: feed_entry(able, tools=True, vision=True),
              plain: feed_entry(plain, tools=False, vision=False)}
    catalog_feeds.replies[CATALOG_PATHS["models_dev"]] = Reply(json.dumps({"fake": {
        "id": "fake", "name": "Fake", "npm": "@ai-sdk/openai-compatible", "api": "http://127.0.0.1:9/v1",
        "models": models}}).encode())
    admin = Admin(stack.url)
    admin.post("/api/catalog/refresh", {"force": True})
    for served in (able, plain):
        provider.set_model(served, latency_ms=20)
    done = bench("onboard", able, plain, "--endpoint", "fake", "--quick", "--wait", url=stack.url)
    assert done.returncode == 0, done.stderr
    aliases = {m["served"]: m["alias"] for m in admin.http.get("/api/models").json()["models"]}
    able_alias, plain_alias = aliases[able], aliases[plain]
    try:
        seated(stack, admin, tag, able_alias, plain_alias)
    finally:  # retired, so they never sit as explorers on other modules' panels
        for alias in (able_alias, plain_alias):
            admin.post("/api/remove", {"alias": alias, "reason": "test over"})


def seated(stack: Stack, admin: Admin, tag: str, able_alias: str, plain_alias: str) -> None:

    admin.collection(f"ob-{tag}", [able_alias, plain_alias])
    content = [{"type": "text", "text": "what is this?"},
               {"type": "image_url", "image_url": {"url": DATA_URL}}]
    seen = httpx.post(stack.url + "/v1/chat/completions", timeout=60, json={
        "model": f"bench/ob-{tag}", "messages": [{"role": "user", "content": content}]}).json()["bench"]
    assert [s["alias"] for s in seen["seats"] if s["seat"] == "member"] == [able_alias]
    skipped = {s["alias"]: s["why"] for s in seen["skipped"]}
    assert skipped[plain_alias] == "does not take images (says models.dev)"

    client = openai.OpenAI(base_url=stack.url + "/v1", api_key="unused", max_retries=0, timeout=60)
    admin.collection(f"ob-route-{tag}", [plain_alias, able_alias], reply="route")
    turn = client.chat.completions.create(model=f"bench/ob-route-{tag}:route", tools=TOOLS,
                                          messages=[{"role": "user", "content": "look something up"}])
    assert turn.model_extra["bench"]["alias"] == able_alias
    admin.collection(f"ob-none-{tag}", [plain_alias], reply="route")
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model=f"bench/ob-none-{tag}:route", tools=TOOLS,
                                       messages=[{"role": "user", "content": "look something up"}])
    assert "does not call tools (says models.dev)" in str(refused.value)
