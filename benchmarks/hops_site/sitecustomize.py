"""On the PYTHONPATH of a `benchmarks.hops` run only: every Python process of it stamps its hops."""

import os

if os.environ.get("BENCH_HOPS_LOG"):
    from benchmarks.hops_marks import install

    install(os.environ["BENCH_HOPS_LOG"])
