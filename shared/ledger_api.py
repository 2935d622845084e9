"""The `/bench/*` routes' requests (H-G10..H-G12), checked before they are passed to the ledger. Pure."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from shared.commands import (
    ExportRequest,
    PendingRequest,
    Price,
    RecordRequest,
    ReportRequest,
    VerdictRequest,
)
from shared.refusal import Refusal

RECORD_USAGE = "GET /bench/record?collection=bench/<name>[&task=<words in the verdicts' notes>]"


def string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def verdict_request(body: dict[str, Any], by: str = "local") -> VerdictRequest:
    call = body.get("call")
    if not isinstance(call, str) or not call.strip():
        raise Refusal(400, '"call" must be a seat\'s call id, e.g. "p20260101-120000-ab12.member1"')
    useful = body.get("useful")
    if not isinstance(useful, bool):
        raise Refusal(400, '"useful" must be true or false')
    note = body.get("note")
    if note is not None and not isinstance(note, str):
        raise Refusal(400, '"note" must be text')
    for field in ("real", "false"):
        if body.get(field) is not None and not string_list(body[field]):
            raise Refusal(400, f'"{field}" must be a list of strings (claims)')
    return VerdictRequest(call=call.strip(), useful=useful, note=note, real=body.get("real"),
                          false_claims=body.get("false"), by=by)


def pending_request(body: dict[str, Any]) -> PendingRequest:
    calls = body.get("calls")
    if not string_list(calls):
        raise Refusal(400, '"calls" must be a list of call ids (strings)')
    return PendingRequest(calls=calls)


REPORT_DAYS = 30
PRICE_PATTERN = r"^.+:[0-9]{1,9}(\.[0-9]{1,9})?:[0-9]{1,9}(\.[0-9]{1,9})?$"
AFTER_PATTERN = r"^.+:[0-9]{1,18}$"
PRICE_USAGE = '"price" is alias:input:output, dollars per million tokens, e.g. gpt-4o:2.5:10'


def iso_time(text: str | None, name: str = "since") -> datetime | None:
    """`/api/usage?since=`: ISO 8601 (RFC 3339's lower-case `t`, `z` too); else 400, Unix times included.
    A time without a zone is UTC."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.upper())
    except ValueError:
        raise Refusal(400, f'"{name}" must be an ISO 8601 time such as 2026-01-31T12:00:00Z (got {len(text)} '
                           "characters that are not one)") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def price(text: str) -> tuple[str, Price]:
    if not re.match(PRICE_PATTERN, text):
        raise Refusal(400, PRICE_USAGE)
    alias, first, rest = text.rsplit(":", 2)
    return alias, Price(input=float(first), output=float(rest))


def report_request(
    since: str | None, until: str | None, prices: Sequence[str], now: datetime
) -> ReportRequest:
    """`/api/report`: the period defaults to the last 30 days up to now; `until` must come after `since`."""
    end = iso_time(until, "until") or now
    try:
        start = iso_time(since, "since") or end - timedelta(days=REPORT_DAYS)
    except OverflowError:  # 30 days before the first day there is
        start = datetime.min.replace(tzinfo=UTC)
    if end <= start:
        raise Refusal(400, '"until" must come after "since"')
    return ReportRequest(since=start, until=end, prices=dict(price(p) for p in prices))


def record_request(query: Mapping[str, str]) -> RecordRequest:
    collection = query.get("collection", "")
    if not collection:
        raise Refusal(400, f"say which collection: {RECORD_USAGE}")
    return RecordRequest(collection=collection, task=query.get("task", ""))


AFTER_USAGE = '"after" is table:seq, the mark an earlier export gave for that table, e.g. seats:1200'


def export_request(since: str | None, after: Sequence[str]) -> ExportRequest:
    """`/api/ledger/export`: `since` a UTC day; each `after` a table's mark (named twice: the last wins)."""
    day = None
    if since is not None:
        try:
            day = date.fromisoformat(since)
        except ValueError:
            raise Refusal(400, '"since" must be a day such as 2026-01-31') from None
    marks: dict[str, int] = {}
    for mark in after:
        if not re.match(AFTER_PATTERN, mark):
            raise Refusal(400, AFTER_USAGE)
        table, seq = mark.rsplit(":", 1)
        marks[table] = int(seq)
    return ExportRequest(after=marks, since=day)
