"""When a call handed to this caller may already have been answered, so the caller looks before paying.

The work queue delivers at least once. A call is handed out again when its caller died or went silent (the
server counts a second delivery), but also when NATS was killed before it saved which calls it had handed
out: it then hands them out again as if for the first time, while the callers that hold them finish and
publish. Such a call was stored before this caller's connection to the server began (a restarted server means
a new connection). So a call delivered more than once, or stored before the connection it arrived on, is
sent to the provider only if no `SeatCompleted` for it is stored yet. Every other call, the hot path, is sent
without a look. Pure.
"""

from __future__ import annotations

# Server and caller clocks may differ by this much (a call stored just after the connection began is looked
# at too: a look costs one lookup, a second call costs the user).
CLOCK_SLACK_S = 2.0


def may_be_answered(delivered: int, stored_at: float, connected_since: float) -> bool:
    """Whether a delivered call may have been answered by another caller already (times are epoch seconds:
    `stored_at` the stream's, `connected_since` when this caller's current connection began, or later)."""
    return delivered > 1 or stored_at <= connected_since + CLOCK_SLACK_S
