"""The seater's clock never gives two plans the same seat time, so their order is never a tie."""

from __future__ import annotations

from datetime import timedelta
from itertools import pairwise

from services.seater.service import Clock


def test_plan_times_strictly_increase_even_within_one_microsecond() -> None:
    clock = Clock()
    times = [clock.next() for _ in range(2000)]
    assert all(a < b for a, b in pairwise(times))
    assert {t.utcoffset() for t in times} == {timedelta(0)}
