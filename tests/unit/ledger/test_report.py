"""`bench report`'s shaping: rates, latency rounding, cost from the prices given (or none), lines per
level."""

from __future__ import annotations

from datetime import UTC, datetime

from services.ledger import report
from shared.commands import Price, ReportRequest

REQ = ReportRequest(since=datetime(2026, 11, 1), until=datetime(2026, 12, 1),
                    prices={"a": Price(input=1.0, output=2.0), "free": Price(input=0, output=0)})


def test_a_time_without_a_zone_is_utc() -> None:
    assert report.params(REQ)["since"] == datetime(2026, 11, 1, tzinfo=UTC)


def test_cost_is_tokens_at_each_models_price_or_unknown() -> None:
    assert report.cost([("a", 1_000_000, 500_000), ("free", 9, 9)], REQ.prices) == 2.0
    assert report.cost([("a", 1, 1), ("b", 1, 0)], REQ.prices) is None  # b has tokens and no price
    assert report.cost([("b", 0, 0)], REQ.prices) == 0.0  # no tokens: nothing to price


def test_lines_per_model_and_per_collection() -> None:
    lines = [
        (report.BY_MODEL, "a", None, 4, 3, 2, 1, 1.23456, 2.5, 100, 50, {"timeout": 1}),
        (report.BY_MODEL, "b", None, 2, 0, 0, 0, None, None, 0, 0, {"rate limit": 2}),
        (2, None, "core", 6, 3, 2, 1, 1.5, 2.5, 100, 50, {"timeout": 1, "rate limit": 2}),
    ]
    tokens = [("core", "a", 100, 50), ("core", "b", 0, 0)]
    out = report.reply(REQ, lines, tokens)
    a, b = out.models
    assert (a.name, a.seats, a.useful_rate, a.judged_share, a.p50_s) == ("a", 4, 0.5, 0.5, 1.235)
    assert a.cost == 0.0002
    assert (b.useful_rate, b.judged_share, b.p50_s, b.failures) == (None, 0.0, None, {"rate limit": 2})
    (core,) = out.collections
    assert (core.name, core.seats, core.cost) == ("core", 6, 0.0002)
    assert core.failures == {"timeout": 1, "rate limit": 2}
