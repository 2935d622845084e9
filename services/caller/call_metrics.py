"""A provider call's figures, as the caller's ops port exports them (`shared.metrics`)."""

from __future__ import annotations

from shared import metrics


def count_call(alias: str, connection: str, status: str, seconds: float, waited_s: float, paced: str) -> None:
    metrics.PROVIDER_CALLS.labels(alias, status).inc()
    if paced == "refused":  # never sent: no latency to count
        metrics.PACING_REFUSALS.labels(connection).inc()
        return
    metrics.PROVIDER_SECONDS.labels(alias).observe(seconds)
    metrics.PACING_WAIT_SECONDS.observe(waited_s)
