"""A key's sliding minute (SEC-4), as the KV entry every replica shares holds it."""

from __future__ import annotations

from shared import key_window as window


def test_requests_are_taken_until_the_cap_then_the_wait_is_until_the_oldest_ages_out() -> None:
    stamps: list[int] = []
    for i in range(3):
        taken = window.take(stamps, rpm=3, now_ms=1_000 + i * 10_000)
        assert taken.retry_after is None
        stamps = taken.stamps
    full = window.take(stamps, rpm=3, now_ms=30_000)
    assert full.retry_after == 31 and full.stamps == stamps  # the first stamp (1 s) frees at 61 s
    later = window.take(stamps, rpm=3, now_ms=61_001)
    assert later.retry_after is None and later.stamps == [11_000, 21_000, 61_001]


def test_the_wait_stays_within_1_and_61_seconds() -> None:
    assert window.take([10_000], rpm=1, now_ms=10_000).retry_after == 60
    assert window.take([10_000], rpm=1, now_ms=69_999).retry_after == 1
    assert window.take([150_000], rpm=1, now_ms=100_000).retry_after == 61  # this clock is behind another


def test_entries_round_trip_and_garbage_reads_as_empty() -> None:
    assert window.decode(window.encode([1, 2])) == [1, 2]
    assert window.decode(b"not json") == [] and window.decode(b'{"a": 1}') == [] and window.decode(None) == []
