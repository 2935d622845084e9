"""U-5, the free-tier guard: a model on a `went paid` alert is not called (not even paced) unless allowed,
and its refusal reads as SPEC says, counts as refused with no attempt, and rests nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from services.caller.outcome import CallOutcome, CallReport, Tally
from services.caller.pacer import Admission
from services.caller.paid_guard import PaidGuard, guard_refusal, is_held
from services.caller.seat_events import cooldown_started, seat_completed
from services.caller.upstream import OpenTicket, Upstream
from services.caller.wire import UpstreamRequest
from shared.alerts import paid_key
from shared.config_state import ConfigState
from shared.events import AlertCleared, AlertRaised, ConfigEvent, ConnectionsSaved
from tests.unit.caller.test_seat_events import seat_call

NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC)
PRICED = "listed with a price now ($0.10/M in)"
PREFIX = "Error: client failed: not sent: the free-tier guard holds fast"


def state(*events: ConfigEvent) -> ConfigState:
    folded = ConfigState()
    for seq, event in enumerate(events, 1):
        folded.apply(event, seq)
    return folded


def paid(served: str = "vendor/fast", message: str = PRICED, kind: Any = "went paid") -> AlertRaised:
    key = paid_key(served) if kind == "went paid" else f"model:pending:{served}"
    return AlertRaised(id=f"cfg:{key}", key=key, kind=kind, message=message, by="admin")


def allow(*names: str) -> ConnectionsSaved:
    return ConnectionsSaved(id=f"cfg:allow:{len(names)}", allow_paid=list(names))


def test_a_model_on_a_went_paid_alert_is_held_with_the_alerts_message() -> None:
    why = guard_refusal(state(paid()), "fast", "vendor/fast")
    assert why == f"not sent: the free-tier guard holds fast (payment required: {PRICED})"


def test_no_alert_another_kind_or_another_served_id_is_not_held() -> None:
    assert guard_refusal(state(), "fast", "vendor/fast") is None
    assert guard_refusal(state(paid(kind="retiring")), "fast", "vendor/fast") is None
    assert guard_refusal(state(paid("vendor/other")), "fast", "vendor/fast") is None
    assert guard_refusal(state(paid(), AlertCleared(id="cfg:x", key=paid_key("vendor/fast"))),
                         "fast", "vendor/fast") is None


@pytest.mark.parametrize("allowed", ["fast", "vendor/fast"])
def test_allow_paid_by_alias_or_served_id_lets_it_through(allowed: str) -> None:
    assert guard_refusal(state(paid(), allow(allowed)), "fast", "vendor/fast") is None
    assert guard_refusal(state(paid(), allow("someone-else")), "fast", "vendor/fast") is not None


def test_the_environment_switch_lets_everything_through() -> None:
    assert guard_refusal(state(paid()), "fast", "vendor/fast", allow_all=True) is None
    assert PaidGuard(state(paid()), allow_all=True).holds("fast", "vendor/fast") is None


def test_a_long_alert_message_cannot_push_the_guards_words_out_of_the_error() -> None:
    held = PaidGuard(state(paid(message="rate limit " * 200))).holds("fast", "vendor/fast")
    assert held is not None and held.error.startswith(PREFIX) and len(held.error) < 500
    assert is_held(held.error)
    assert not is_held("Error: client failed: rate limit (not sent; paced by the bench)")


class CountingPacer:
    """A pacer that lets everything through and counts what it was asked."""

    def __init__(self, config: ConfigState) -> None:
        self.book = type("Book", (), {"config": config})()
        self.admitted = 0

    async def admit(self, *_: Any) -> Admission:
        self.admitted += 1
        return Admission("sent")

    async def settle(self, *_: Any) -> None:
        return None


async def test_the_upstream_seam_neither_paces_nor_sends_a_held_call() -> None:
    config = state(paid())
    pacer = CountingPacer(config)
    upstream = Upstream(None, None, pacer)  # type: ignore[arg-type]
    sent: list[UpstreamRequest] = []

    async def send(request: UpstreamRequest) -> CallOutcome:
        sent.append(request)
        return CallOutcome(text="hi")

    request = UpstreamRequest(url="https://api.example.com/v1/chat/completions", headers={}, body={})
    tally = Tally()
    outcome = await upstream.paced_attempt(seat_call(), request, tally, OpenTicket(), send)
    assert outcome.error.startswith(PREFIX) and "payment required" in outcome.error
    assert (pacer.admitted, sent, tally.attempts, tally.paced) == (0, [], 0, "refused")

    config.apply(allow("fast"), 99)  # folded while the caller runs: the next call goes out
    tally = Tally()
    outcome = await upstream.paced_attempt(seat_call(), request, tally, OpenTicket(), send)
    assert (outcome.text, pacer.admitted, len(sent), tally.paced) == ("hi", 1, 1, "sent")


def test_a_held_seat_is_recorded_refused_with_no_attempt_and_rests_nothing() -> None:
    held = PaidGuard(state(paid(message="429 rate limit, try again in 5m"))).holds("fast", "vendor/fast")
    assert held is not None
    tally = Tally()
    tally.refused = True
    event = seat_completed(seat_call(), CallReport(held, tally.attempts, None, 0.0, tally.paced), "caller-1")
    assert (event.status, event.attempts, event.paced) == ("error", 0, "refused")
    assert event.error.startswith(PREFIX)
    assert cooldown_started(seat_call(), event.error, NOW) is None
