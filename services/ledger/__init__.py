"""The ledger: the one process that writes the DuckDB file, a fold of the event stream.

It folds every event on `BENCH_EVENTS` into typed tables and answers the questions that need the whole
history (verdicts, pending seats, a collection's record) over NATS request/reply.
"""
