"""The caller: takes seat calls off the `BENCH_CALLS` work queue, calls providers, publishes outcomes."""
