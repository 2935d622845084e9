"""The caller's HTTP exchange against the fake provider process: U-2 requests, U-3 outcomes, U-4 retries."""

from __future__ import annotations

import time
from typing import Any

import pytest

from services.caller.upstream import Upstream
from shared.commands import SeatCall
from shared.events import LimitsSaved
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import UPSTREAM_KEY as KEY
from tests.integration.caller.conftest import Rig


@pytest.fixture
def upstream(rig: Rig) -> Upstream:
    return rig.upstream


def seat_call(provider: FakeProvider, served: str, **over: Any) -> SeatCall:
    fields: dict[str, Any] = {
        "call": f"p20261202-120000-abcd.{served}",
        "panel": "p20261202-120000-abcd",
        "seat": "member",
        "alias": served,
        "served": served,
        "endpoint": "fake",
        "base": provider.base_url,
        "connection": "fake",
        "headers": {"X-Title": "bench"},
        "messages": [{"role": "user", "content": "What is two plus two?"}],
        "options": {"max_tokens": 64},
        "deadline": time.time() + 30,
        "timeout_s": 30.0,
    }
    fields.update(over)
    return SeatCall.model_validate(fields)


def sent_for(provider: FakeProvider, served: str) -> list[dict[str, Any]]:
    return [r for r in provider.requests() if r["body"].get("model") == served]


async def test_streamed_answer_with_usage_and_the_request_of_a88(
    provider: FakeProvider, upstream: Upstream
) -> None:
    report = await upstream.call(seat_call(provider, "u-ok"))
    out = report.outcome
    assert (out.error, out.text, out.finish, out.model) == (
        "",
        "u-ok says: What is two plus two?",
        "stop",
        "u-ok",
    )
    assert report.attempts == 1 and report.usage is not None and report.usage.tokens_out > 0
    [sent] = sent_for(provider, "u-ok")
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["authorization"] == f"Bearer {KEY}"
    assert sent["headers"]["user-agent"] == "benchwarmers" and sent["headers"]["x-title"] == "bench"
    assert sent["body"]["stream"] is True and sent["body"]["stream_options"] == {"include_usage": True}
    assert sent["body"]["max_tokens"] == 64


async def test_429_with_retry_after_is_retried_a89(provider: FakeProvider, upstream: Upstream) -> None:
    provider.set_model("u-429-once", behaviour="rate_limit", retry_after=1, times=1)
    report = await upstream.call(seat_call(provider, "u-429-once"))
    assert report.outcome.error == "" and report.attempts == 2
    first, second = sent_for(provider, "u-429-once")
    assert second["at"] - first["at"] >= 0.9  # waited the provider's Retry-After


async def test_a_persistent_429_is_tried_three_times_then_reported(
    provider: FakeProvider, upstream: Upstream
) -> None:
    provider.set_model("u-429", behaviour="rate_limit", retry_after=0.2)
    report = await upstream.call(seat_call(provider, "u-429"))
    assert report.attempts == 3 and report.outcome.http_status == 429
    assert report.outcome.error.startswith("Error: Error code: 429 - ")
    assert report.outcome.error.endswith("Retry-After: 0.2") and "try again in 0.2s" in report.outcome.error


async def test_500_is_retried_and_401_is_not(provider: FakeProvider, upstream: Upstream) -> None:
    provider.set_model("u-500", behaviour="error_500")
    provider.set_model("u-401", behaviour="echo_auth")
    assert (await upstream.call(seat_call(provider, "u-500"))).attempts == 3
    report = await upstream.call(seat_call(provider, "u-401"))
    assert report.attempts == 1 and report.outcome.http_status == 401


async def test_a_key_echoed_back_is_redacted(provider: FakeProvider, upstream: Upstream) -> None:
    provider.set_model("u-echo", behaviour="echo_auth")
    report = await upstream.call(seat_call(provider, "u-echo"))
    assert KEY not in report.outcome.error and "Bearer [redacted]" in report.outcome.error


async def test_stream_options_refused_are_dropped_once(provider: FakeProvider, upstream: Upstream) -> None:
    provider.set_model("u-nso", behaviour="refuse_stream_options")
    report = await upstream.call(seat_call(provider, "u-nso"))
    assert (
        report.outcome.error == "" and report.outcome.text.startswith("u-nso says") and report.attempts == 2
    )
    assert [("stream_options" in r["body"]) for r in sent_for(provider, "u-nso")] == [True, False]


async def test_redirects_are_not_followed(provider: FakeProvider, upstream: Upstream) -> None:
    provider.set_model("u-redirect", behaviour="redirect")
    report = await upstream.call(seat_call(provider, "u-redirect"))
    assert report.outcome.http_status == 307 and report.outcome.error.startswith("Error: Error code: 307")
    assert report.attempts == 1


@pytest.mark.parametrize(
    ("behaviour", "start"),
    [
        ("error_in_200", "Error: provider error in a 200 reply"),
        ("midstream_error", "Error: provider error mid-stream"),
        ("cut", "Error: client failed: stream cut before [DONE]"),
    ],
)
async def test_failures_inside_a_200(
    provider: FakeProvider, upstream: Upstream, behaviour: str, start: str
) -> None:
    provider.set_model(f"u-{behaviour}", behaviour=behaviour)
    report = await upstream.call(seat_call(provider, f"u-{behaviour}"))
    assert report.outcome.error.startswith(start) and report.attempts == 1


async def test_reasoning_and_tool_calls_from_a_real_stream(
    provider: FakeProvider, upstream: Upstream
) -> None:
    provider.set_model("u-think", behaviour="reasoning")
    provider.set_model("u-tools", behaviour="tools")
    think = (await upstream.call(seat_call(provider, "u-think"))).outcome
    assert think.reasoning == "Thinking it over." and think.text == "u-think says: What is two plus two?"
    tools = (await upstream.call(seat_call(provider, "u-tools"))).outcome
    assert [(t.name, t.arguments) for t in tools.tool_calls] == [("lookup", '{"q": "weather in Oslo"}')]


async def test_empty_length_answer_is_retried_with_double_budget(
    provider: FakeProvider, upstream: Upstream
) -> None:
    provider.set_model("u-len", behaviour="empty_length")
    report = await upstream.call(seat_call(provider, "u-len"))
    assert report.attempts == 2 and report.outcome.finish == "length"
    assert [r["body"]["max_tokens"] for r in sent_for(provider, "u-len")] == [64, 128]


async def test_a_hanging_provider_hits_the_deadline(provider: FakeProvider, upstream: Upstream) -> None:
    provider.set_model("u-hang", behaviour="hang")
    started = time.monotonic()
    report = await upstream.call(seat_call(provider, "u-hang", deadline=time.time() + 1.0, timeout_s=1.0))
    assert report.outcome.error == "no answer in 1s" and report.attempts == 1  # sent, never answered
    assert time.monotonic() - started < 5


async def test_missing_key_is_refused_without_sending(provider: FakeProvider, rig: Rig) -> None:
    rig.save("open-router", "https://openrouter.invalid/api/v1")
    call = seat_call(provider, "u-remote", endpoint="open-router", base="https://openrouter.invalid/api/v1")
    report = await rig.upstream.call(call)
    assert report.outcome.error == "Error: client failed: missing key: set BENCHWARMERS_KEY_OPEN_ROUTER"
    assert report.attempts == 0


async def test_loopback_endpoint_without_key_sends_no_authorization(provider: FakeProvider, rig: Rig) -> None:
    rig.save("ollama", provider.base_url)
    report = await rig.upstream.call(seat_call(provider, "u-local", endpoint="ollama"))
    assert report.outcome.error == ""
    [sent] = sent_for(provider, "u-local")
    assert "authorization" not in sent["headers"]


async def test_connection_refused_is_retried_then_reported(rig: Rig, provider: FakeProvider) -> None:
    from shared.natsserver import free_port

    down = f"http://127.0.0.1:{free_port()}/v1"
    rig.save("down", down)
    report = await rig.upstream.call(seat_call(provider, "u-down", endpoint="down", base=down))
    assert report.attempts == 3 and report.outcome.connection_failed
    assert report.outcome.error.startswith("Error: client failed: connection error")


async def test_a_paced_calls_window_counts_from_when_it_left(provider: FakeProvider, rig: Rig) -> None:
    """L-2: the slot is stamped with the moment the request's bytes were written, which comes after the
    admission and before the provider's own arrival stamp, so both count the same minute."""
    rig.book.config.apply(LimitsSaved(id="cfg:rpm-left", scope="connection", name="fake", rpm=1000))
    before = time.time()
    report = await rig.upstream.call(seat_call(provider, "u-left"))
    [entry] = [e for e in (await rig.store.read("fake"))[0].entries if e.alias == "u-left"]
    [sent] = sent_for(provider, "u-left")
    assert report.outcome.error == "" and report.outcome.sent_at == entry.t
    assert before < entry.t <= sent["at"]
