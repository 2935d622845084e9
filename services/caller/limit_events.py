"""The limit facts a finished call teaches (L-3, L-4): a stated limit that is tighter than what was known,
and the quota records the provider reported (published sparingly: the bucket enforces them anyway)."""

from __future__ import annotations

from datetime import UTC, datetime

from services.caller.limit_book import LimitBook
from services.caller.outcome import CallReport
from services.caller.quota_headers import Quota
from services.caller.rate_limits import stated_context, stated_limit
from shared.commands import SeatCall
from shared.events import LimitLearned, QuotaObserved, QuotaRecord
from shared.ids import event_id

QUOTA_NEWS_EVERY_S = 10.0


def limits_learned(call: SeatCall, report: CallReport, book: LimitBook) -> list[LimitLearned]:
    """Only from a provider's own error (a call we refused teaches nothing), only when tighter."""
    text = report.outcome.error
    if not text or not report.attempts:
        return []
    found: list[tuple[str, int]] = []
    limit = stated_limit(text)
    if limit is not None:
        found.append(limit)
    context = stated_context(text)
    if context is not None:
        found.append(("context", context))
    return [
        LimitLearned.model_validate({
            "id": event_id("learned", call.alias, axis, str(n)), "by": "caller", "alias": call.alias,
            "connection": call.connection, "axis": axis, "limit": n, "call": call.call,
            "why": f"stated in the provider's error for call {call.call}",
        })
        for axis, n in found if book.is_tighter(call.connection, call.alias, axis, n)
    ]


def record_of(quota: Quota) -> QuotaRecord:
    return QuotaRecord.model_validate({
        "metric": quota.metric, "window": quota.window, "limit": quota.limit, "remaining": quota.remaining,
        "reset_at": datetime.fromtimestamp(quota.reset_at, UTC), "source": quota.source,
    })


class QuotaNews:
    """Publishes a call's quota records when they matter (a quota used up) or at most every 10 s per model:
    L-7 shows the latest, the bucket already enforces every one."""

    def __init__(self) -> None:
        self.last: dict[tuple[str, str], float] = {}

    def event(self, call: SeatCall, quotas: list[Quota], now: float) -> QuotaObserved | None:
        if not quotas:
            return None
        key = (call.connection, call.alias)
        urgent = any(q.remaining <= 0 for q in quotas)
        if not urgent and now - self.last.get(key, 0.0) < QUOTA_NEWS_EVERY_S:
            return None
        self.last[key] = now
        return QuotaObserved(id=event_id("quota", call.call), by="caller", alias=call.alias,
                             connection=call.connection, call=call.call,
                             records=[record_of(q) for q in quotas])
