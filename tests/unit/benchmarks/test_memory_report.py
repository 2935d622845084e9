"""The benchmark's memory figures: the stack's peak is the highest sum at one sample, not the sum of each
process's own peak, and a soak reports each process's growth once warm."""

from __future__ import annotations

import os

from benchmarks.memory import MB, Peaks, Snapshot, memory_report, snapshot


def test_the_total_peak_is_the_highest_sum_at_one_instant() -> None:
    peaks = Peaks()
    peaks.add({"ledger": 100 * MB, "nats": 10 * MB})
    peaks.add({"ledger": 20 * MB, "nats": 50 * MB})
    assert peaks.each == {"ledger": 100 * MB, "nats": 50 * MB}
    assert peaks.total == 110 * MB  # not 150: the two peaks never met


def test_the_report_gives_idle_peak_after_and_the_growth_over_a_soak() -> None:
    idle = Snapshot({"a": 10 * MB, "b": 20 * MB}, {"a": 5 * MB, "b": 15 * MB})
    warm = Snapshot({"a": 30 * MB, "b": 40 * MB}, {"a": 25 * MB, "b": 35 * MB})
    after = Snapshot({"a": 31 * MB, "b": 40 * MB}, {"a": 26 * MB, "b": 35 * MB})
    peaks = Peaks()
    peaks.add({"a": 50 * MB, "b": 60 * MB})
    pss_peaks = Peaks()
    pss_peaks.add({"a": 40 * MB, "b": 45 * MB})
    report = memory_report(idle, peaks, after, "after a 10-minute soak", warm, pss_peaks)
    assert report["per_process_mb"] == {"a": {"idle": 10.0, "peak": 50.0, "after": 31.0},
                                        "b": {"idle": 20.0, "peak": 60.0, "after": 40.0}}
    assert report["per_process_pss_mb"] == {"a": {"idle": 5.0, "peak": 40.0, "after": 26.0},
                                            "b": {"idle": 15.0, "peak": 45.0, "after": 35.0}}
    assert report["total_rss_mb"] == {"idle": 30.0, "peak": 110.0, "after": 71.0}
    assert report["total_pss_mb"] == {"idle": 20.0, "peak": 85.0, "after": 61.0}
    assert report["soak_growth_mb"] == {"a": 1.0, "b": 0.0}
    unsampled = memory_report(idle, peaks, after, "after the runs")
    assert "soak_growth_mb" not in unsampled and unsampled["total_pss_mb"]["peak"] is None  # type: ignore[index]
    assert unsampled["per_process_pss_mb"]["a"] == {"idle": 5.0, "peak": None, "after": 26.0}  # type: ignore[index]


def test_a_snapshot_of_this_process_sees_its_memory_and_a_gone_process_as_none() -> None:
    shot = snapshot({"me": os.getpid(), "gone": 2**22 + 12345})
    assert shot.rss["me"] > 1 * MB and 0 < shot.pss["me"] <= shot.rss["me"] * 2
    assert shot.rss["gone"] == 0 and shot.pss["gone"] == 0
