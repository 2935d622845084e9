"""Anthropic, Gemini and Responses calls over real HTTP against the fake's wire formats: the request on the
wire (C-3, U-2), the outcome (U-3), retries (U-4) and quota pacing (L-4) through the real bucket."""

from __future__ import annotations

import time
from typing import Any

import pytest

from services.caller.upstream import Upstream
from shared.commands import SeatCall
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import UPSTREAM_KEY as KEY
from tests.integration.caller.conftest import Rig, endpoint_of

KINDS = ("anthropic", "gemini", "responses")
AUTH = {
    "anthropic": ("x-api-key", KEY),
    "gemini": ("x-goog-api-key", KEY),
    "responses": ("authorization", f"Bearer {KEY}"),
}
PATH = {"anthropic": "/v1/messages", "responses": "/v1/responses"}


@pytest.fixture
def upstream(rig: Rig) -> Upstream:
    return rig.upstream


def seat_call(provider: FakeProvider, api: str, served: str, **over: Any) -> SeatCall:
    fields: dict[str, Any] = {
        "call": f"p20261202-120000-abcd.{served}",
        "panel": "p20261202-120000-abcd",
        "seat": "member",
        "alias": served,
        "served": served,
        "endpoint": endpoint_of(api),
        "base": provider.base_for(api),
        "api": api,
        "connection": f"fake-{api}",
        "headers": {"X-Title": "bench"},
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What is two plus two?"},
        ],
        "options": {"max_tokens": 64},
        "deadline": time.time() + 30,
        "timeout_s": 30.0,
    }
    fields.update(over)
    return SeatCall.model_validate(fields)


def sent_for(provider: FakeProvider, served: str) -> list[dict[str, Any]]:
    return [r for r in provider.requests() if r["model"] == served]


@pytest.mark.parametrize("api", KINDS)
async def test_an_answer_with_usage_and_the_request_on_the_wire(
    provider: FakeProvider, upstream: Upstream, api: str
) -> None:
    served = f"w-ok-{api}"
    report = await upstream.call(seat_call(provider, api, served))
    out = report.outcome
    assert (out.error, out.text, out.finish, out.model) == (
        "",
        f"{served} says: What is two plus two?",
        "stop",
        served,
    )
    assert report.attempts == 1 and report.usage is not None
    assert report.usage.tokens_in > 0 and report.usage.tokens_out > 0
    [sent] = sent_for(provider, served)
    header, value = AUTH[api]
    assert sent["headers"][header] == value and sent["headers"]["x-title"] == "bench"
    assert sent["headers"]["user-agent"] == "benchwarmers"
    if api == "gemini":
        assert sent["path"] == f"/v1beta/models/{served}:streamGenerateContent"
        assert sent["body"]["generationConfig"]["maxOutputTokens"] == 64
        assert sent["body"]["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    else:
        assert sent["path"] == PATH[api] and sent["body"]["stream"] is True
    if api == "responses":
        assert sent["body"]["store"] is False and sent["body"]["instructions"] == "Be brief."


@pytest.mark.parametrize("api", KINDS)
async def test_reasoning_apart_and_tool_calls(provider: FakeProvider, upstream: Upstream, api: str) -> None:
    provider.set_model(f"w-think-{api}", behaviour="reasoning")
    provider.set_model(f"w-tools-{api}", behaviour="tools")
    think = (await upstream.call(seat_call(provider, api, f"w-think-{api}"))).outcome
    assert (
        think.reasoning == "Thinking it over." and think.text == f"w-think-{api} says: What is two plus two?"
    )
    tools = await upstream.call(seat_call(provider, api, f"w-tools-{api}"))
    assert tools.outcome.finish == "tool_calls" and tools.outcome.error == ""
    assert [(t.name, t.arguments.replace(" ", "")) for t in tools.outcome.tool_calls] == [
        ("lookup", '{"q":"weatherinOslo"}')
    ]
    if api != "anthropic":  # Anthropic does not report reasoning tokens apart
        assert (await upstream.call(seat_call(provider, api, f"w-think-{api}"))).usage.reasoning == 4  # type: ignore[union-attr]


@pytest.mark.parametrize("api", KINDS)
@pytest.mark.parametrize(
    ("behaviour", "start"),
    [
        ("error_in_200", "Error: provider error "),
        ("midstream_error", "Error: provider error mid-stream: "),
        ("cut", "Error: client failed: stream cut before "),
    ],
)
async def test_errors_inside_a_200(
    provider: FakeProvider, upstream: Upstream, api: str, behaviour: str, start: str
) -> None:
    served = f"w-{behaviour}-{api}"
    provider.set_model(served, behaviour=behaviour)
    report = await upstream.call(seat_call(provider, api, served))
    assert report.outcome.error.startswith(start) and report.attempts == 1
    assert report.outcome.http_status == 200


async def test_a_blocked_gemini_prompt_is_an_error(provider: FakeProvider, upstream: Upstream) -> None:
    provider.set_model("w-blocked", behaviour="blocked")
    report = await upstream.call(seat_call(provider, "gemini", "w-blocked"))
    assert "blockReason" in report.outcome.error and "SAFETY" in report.outcome.error


@pytest.mark.parametrize("api", KINDS)
async def test_a_rate_limit_is_retried_after_the_stated_wait_and_paced_until_its_reset(
    provider: FakeProvider, upstream: Upstream, api: str
) -> None:
    served = f"w-429-{api}"
    provider.set_model(served, behaviour="rate_limit", retry_after=1, times=1)
    report = await upstream.call(seat_call(provider, api, served))
    assert report.outcome.error == "" and report.attempts == 2
    first, second = sent_for(provider, served)
    assert second["at"] - first["at"] >= 1.0  # the retry waited the stated reset
    assert any(q.remaining == 0 for q in report.quotas)  # the 429's records are reported for L-7


async def test_a_gemini_quota_records_its_limit_and_reset(provider: FakeProvider, rig: Rig) -> None:
    provider.set_model("w-429-g", behaviour="rate_limit", retry_after=0.5)
    call = seat_call(provider, "gemini", "w-429-g", retries=0)
    report = await rig.upstream.call(call)
    [quota] = report.quotas
    assert (quota.metric, quota.window, quota.limit, quota.remaining) == ("requests", "minute", 10, 0)
    assert quota.reset_at - quota.observed_at == pytest.approx(0.5)
    doc, _ = await rig.store.read(call.connection)
    assert "w-429-g|requests|minute" in doc.quotas  # held in the bucket for every replica


@pytest.mark.parametrize("api", ("chat", *KINDS))
async def test_a_reply_naming_another_model_is_reported(
    provider: FakeProvider, upstream: Upstream, api: str
) -> None:
    provider.set_model(f"w-swap-{api}", reply_model="cheaper-model-8b")
    report = await upstream.call(seat_call(provider, api, f"w-swap-{api}"))
    assert report.outcome.error == "" and report.outcome.model == "cheaper-model-8b"
