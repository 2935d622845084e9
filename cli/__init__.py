"""The `bench` command line: a thin client of a running server, plus `bench up` for the local stack."""
