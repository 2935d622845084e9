"""L-5's usage line of every provider call, derived in SQL from the rows a batch already stages.

A seat is a provider call (unless it is a route conversation's offload: the route attempts report their
own calls as `call_used`, so counting the offload too would count a call twice), and its usage line is
mostly the seat's own columns. Mapping and appending a second row of 28 Python values for every seat was
about a sixth of the fold's time; selecting the line from the staged seats (and the staged `call_used`
rows) in the same transaction costs DuckDB a fraction of that. This is the one place the rule is written.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.ledger.fold import CALL_COLUMNS, NO_ANSWER

# A call pacing refused sent nothing: it counts no request and no token.
REFUSED = "paced = 'refused'"
NOT_SENT_ZERO = ("attempts", "tokens_in", "tokens_out")

EXPRESSIONS = {
    # When the call went out, after any pacing wait (`seconds` counts the wait).
    "t": '"at" - to_microseconds(CAST(round(greatest(0.0, seconds - waited_s) * 1e6) AS BIGINT))',
    # `refused` when pacing refused it, `timeout` when its deadline cut it, else the seat's status.
    "status": f"CASE WHEN {REFUSED} THEN 'refused' "
              f"WHEN status = 'error' AND starts_with(error, '{NO_ANSWER}') THEN 'timeout' ELSE status END",
    **{name: f"CASE WHEN {REFUSED} THEN 0 ELSE {name} END" for name in NOT_SENT_ZERO},
}


def select(columns: Sequence[str], seats_stage: str, calls_stage: str) -> str:
    """The batch's usage lines, in `columns` order (the `usage` table's), the first per call in stream
    order (a call completed twice is counted once)."""
    source = ", ".join(f'"{name}"' for name in CALL_COLUMNS)
    picked = ", ".join(EXPRESSIONS.get(name, f'"{name}"') for name in columns)
    return (
        f"SELECT {picked} FROM (SELECT {source} FROM {seats_stage} WHERE purpose <> 'route' "
        f"UNION ALL SELECT {source} FROM {calls_stage}) "
        "QUALIFY row_number() OVER (PARTITION BY call ORDER BY seq) = 1"
    )
