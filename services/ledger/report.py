"""`bench report`: per model and per collection over a period, how the offload seats went. Pure: the SQL
text and the shaping of its rows, so both are tested without a database (`Store.report` runs them).

A seat counts in the period its completion was folded at (`seats.at`); only offloads (panel, merger,
route seats) count, never probes or shadow seats. A call's verdict is its latest. Latency is over the
seats that answered. Cost needs prices the ledger does not hold: the request carries them, and a line
with tokens on a model of unknown price has no cost rather than a wrong one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from services.ledger.offloads import OFFLOAD_PURPOSES
from shared.commands import Price, ReportLine, ReportReply, ReportRequest

PURPOSES = ", ".join(f"'{p}'" for p in OFFLOAD_PURPOSES)

# The period's seats with their latest verdict (arg_max over seq: one pass, no window).
SEATS_IN_PERIOD = (
    "WITH s AS (SELECT s.alias, s.collection, s.status, s.seconds, s.tokens_in, s.tokens_out, s.failure, "
    "v.useful FROM seats s "
    "LEFT JOIN (SELECT call, arg_max(useful, seq) AS useful FROM verdicts GROUP BY call) v "
    f'ON v.call = s.call WHERE s."at" >= $since AND s."at" < $until AND s.purpose IN ({PURPOSES})) '
)

# One row per model (collection NULL, grouping 1) and per collection (alias NULL, grouping 2).
LINES_SQL = SEATS_IN_PERIOD + (
    "SELECT grouping(alias, collection) AS level, alias, collection, count(*), "
    "count(*) FILTER (WHERE status = 'ok'), count(useful), count(*) FILTER (WHERE useful), "
    "quantile_cont(seconds, 0.5) FILTER (WHERE status = 'ok'), "
    "quantile_cont(seconds, 0.95) FILTER (WHERE status = 'ok'), "
    "coalesce(sum(tokens_in), 0)::BIGINT, coalesce(sum(tokens_out), 0)::BIGINT, histogram(failure) "
    "FROM s GROUP BY GROUPING SETS ((alias), (collection)) ORDER BY level, alias, collection"
)

# Tokens per collection and model: a collection's cost is its models' tokens at each model's price.
TOKENS_SQL = SEATS_IN_PERIOD + (
    "SELECT collection, alias, coalesce(sum(tokens_in), 0)::BIGINT, coalesce(sum(tokens_out), 0)::BIGINT "
    "FROM s GROUP BY collection, alias"
)

BY_MODEL = 1  # grouping(alias, collection) when only alias is grouped: collection is the aggregated one


def utc(when: datetime) -> datetime:
    """A time without a zone is UTC, as everywhere in the ledger."""
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def params(req: ReportRequest) -> dict[str, Any]:
    return {"since": utc(req.since), "until": utc(req.until)}


def cost(tokens: Sequence[tuple[str, int, int]], prices: dict[str, Price]) -> float | None:
    """The cost of (alias, tokens in, tokens out) rows; None when a model with tokens has no price."""
    total = 0.0
    for alias, tokens_in, tokens_out in tokens:
        if not tokens_in and not tokens_out:
            continue
        price = prices.get(alias)
        if price is None:
            return None
        total += (tokens_in * price.input + tokens_out * price.output) / 1_000_000
    return round(total, 6)


def line(name: str, row: Sequence[Any], spent: float | None) -> ReportLine:
    seats, answered, judged, useful, p50, p95, tokens_in, tokens_out, failures = row
    return ReportLine(
        name=name, seats=seats, answered=answered, judged=judged, useful=useful,
        useful_rate=round(useful / judged, 4) if judged else None,
        judged_share=round(judged / seats, 4) if seats else 0.0,
        p50_s=None if p50 is None else round(p50, 3), p95_s=None if p95 is None else round(p95, 3),
        tokens_in=tokens_in, tokens_out=tokens_out, cost=spent, failures=dict(failures or {}),
    )


def reply(req: ReportRequest, lines: Sequence[Sequence[Any]], tokens: Sequence[Sequence[Any]]) -> ReportReply:
    """The reply from LINES_SQL's and TOKENS_SQL's rows."""
    per_collection: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    per_model: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for collection, alias, tokens_in, tokens_out in tokens:
        per_collection[collection].append((alias, tokens_in, tokens_out))
        per_model[alias].append((alias, tokens_in, tokens_out))
    out = ReportReply(since=req.since, until=req.until)
    for level, alias, collection, *rest in lines:
        if level == BY_MODEL:
            out.models.append(line(alias, rest, cost(per_model[alias], req.prices)))
        else:
            out.collections.append(line(collection, rest, cost(per_collection[collection], req.prices)))
    return out
