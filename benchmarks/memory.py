"""The stack's memory as `make bench` reports it: every process idle, at its peak, and after a long run.

RSS counts a shared library once in every process that maps it, so the stack's total is also given as PSS
(each shared page split between the processes sharing it), the figure that adds up to what the machine
gives the stack. The peak is sampled four times a second, RSS and PSS at the same instants; the total's peak
is the peak of the sum at one instant, not the sum of each process's own peak.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import psutil

MB = 2**20


def rss_of(pid: int) -> int:
    try:
        return int(psutil.Process(pid).memory_info().rss)
    except psutil.Error:
        return 0


def pss_of(pid: int) -> int:
    """Proportional set size: Linux's `smaps_rollup` (one line, cheap enough to sample under load); the RSS
    where the kernel does not say."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss_of(pid)


@dataclass
class Snapshot:
    """Every process's RSS and PSS at one moment, in bytes."""

    rss: dict[str, int]
    pss: dict[str, int]

    def total_rss(self) -> int:
        return sum(self.rss.values())

    def total_pss(self) -> int:
        return sum(self.pss.values())


def snapshot(pids: dict[str, int]) -> Snapshot:
    return Snapshot({k: rss_of(p) for k, p in pids.items()}, {k: pss_of(p) for k, p in pids.items()})


@dataclass
class Peaks:
    """Each process's highest RSS seen, and the highest sum of them seen at one sample."""

    each: dict[str, int] = field(default_factory=dict)
    total: int = 0

    def add(self, sample: dict[str, int]) -> None:
        for name, value in sample.items():
            self.each[name] = max(self.each.get(name, 0), value)
        self.total = max(self.total, sum(sample.values()))


class RssSampler:
    """Samples the resident memory (RSS and PSS) of every process of interest in a thread; keeps the peaks."""

    def __init__(self, pids: dict[str, int], every_s: float = 0.25) -> None:
        self.pids, self.every_s = pids, every_s
        self.peaks, self.pss_peaks = Peaks(), Peaks()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peaks.add({name: rss_of(pid) for name, pid in self.pids.items()})
            self.pss_peaks.add({name: pss_of(pid) for name, pid in self.pids.items()})
            self._stop.wait(self.every_s)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def memory_report(idle: Snapshot, peaks: Peaks, after: Snapshot, after_label: str,
                  warm: Snapshot | None = None, pss_peaks: Peaks | None = None) -> dict[str, object]:
    """Megabytes per process (idle, peak, after) and for the stack; `warm` (the soak's first sample, taken
    once the stack is warm) gives the growth over the soak, which should be about nothing."""

    def mb(value: int) -> float:
        return round(value / MB, 1)

    each = {name: {"idle": mb(idle.rss[name]), "peak": mb(peaks.each.get(name, 0)),
                   "after": mb(after.rss[name])} for name in idle.rss}
    # A page shared by the forked services (shared/zygote.py) is in each one's RSS; PSS splits it among them.
    each_pss = {name: {"idle": mb(idle.pss[name]),
                       "peak": mb(pss_peaks.each.get(name, 0)) if pss_peaks else None,
                       "after": mb(after.pss[name])} for name in idle.pss}
    report: dict[str, object] = {
        "after": after_label,
        "per_process_mb": each,
        "per_process_pss_mb": each_pss,
        "total_rss_mb": {"idle": mb(idle.total_rss()), "peak": mb(peaks.total),
                         "after": mb(after.total_rss())},
        "total_pss_mb": {"idle": mb(idle.total_pss()), "peak": mb(pss_peaks.total) if pss_peaks else None,
                         "after": mb(after.total_pss())},
    }
    if warm is not None:
        report["soak_growth_mb"] = {name: mb(after.rss[name] - warm.rss[name]) for name in warm.rss}
    return report
