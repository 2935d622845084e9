"""Every Prometheus metric the services export, defined once (names, help, labels); each process serves
the ones it fills on its ops port (`shared.ops`). Labels are bounded: routes are the app's route templates,
aliases the bench's models; never a key, a prompt or a call id."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)

# ---------------------------------------------------------------- every process
BUS_CONNECTED = Gauge("bench_bus_connected", "1 while this process is connected to NATS")

# ---------------------------------------------------------------- gateway
HTTP_REQUESTS = Counter("bench_http_requests", "HTTP requests answered, by route template, API format and "
                        "status", ["route", "format", "status"])
PANEL_SECONDS = Histogram("bench_panel_seconds", "A panel from its request to its last seat (or failure)",
                          ["mode", "outcome"], buckets=LATENCY_BUCKETS)
ROUTE_TURN_SECONDS = Histogram("bench_route_turn_seconds", "A route turn from its request to its end",
                               ["status"], buckets=LATENCY_BUCKETS)
SEATS = Counter("bench_seats", "Panel seats by how they ended", ["status"])

# ---------------------------------------------------------------- caller
PROVIDER_CALLS = Counter("bench_provider_calls", "Provider calls by model and outcome", ["alias", "status"])
PROVIDER_SECONDS = Histogram("bench_provider_call_seconds", "A provider call, pacing wait included",
                             ["alias"], buckets=LATENCY_BUCKETS)
PACING_WAIT_SECONDS = Histogram("bench_pacing_wait_seconds", "Time a call waited for its connection's limits",
                                buckets=LATENCY_BUCKETS)
PACING_REFUSALS = Counter("bench_pacing_refusals", "Calls the pacer refused (a limit that cannot be met in "
                          "time, or the free-tier guard)", ["connection"])
WORK_QUEUE_PENDING = Gauge("bench_work_queue_pending", "Provider calls waiting in BENCH_CALLS for a caller")
WORK_QUEUE_REDELIVERED = Gauge("bench_work_queue_redelivered",
                               "Calls delivered more than once and not yet acknowledged")

# ---------------------------------------------------------------- ledger
LEDGER_LAG = Gauge("bench_ledger_lag_events", "Events in BENCH_EVENTS the ledger has not folded yet")
EVENTS_STREAM_BYTES = Gauge("bench_events_stream_bytes", "Bytes BENCH_EVENTS holds")
STORE_FILL_RATIO = Gauge("bench_jetstream_store_fill_ratio", "JetStream file store used / its limit (0 when "
                         "unlimited); BENCH_EVENTS refuses new events when it is full: alert at 0.8")
