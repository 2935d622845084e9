"""When `bench up` starts a dead child again: at once, then after a doubling pause while it keeps dying."""

from __future__ import annotations

from dataclasses import dataclass

from cli.restarts import LONGEST_PAUSE_S, STEADY_S, Restarts
from cli.stack import tend


def test_the_first_death_restarts_at_once_and_quick_ones_wait_longer_each_time() -> None:
    r = Restarts()
    r.started(100.0)
    pauses = []
    now = 100.0
    for _ in range(9):
        now += 1.0
        pauses.append(r.died(now))
        r.started(now + pauses[-1])
        now += pauses[-1]
    assert pauses == [0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, LONGEST_PAUSE_S, LONGEST_PAUSE_S]


def test_a_child_that_stayed_up_starts_afresh() -> None:
    r = Restarts()
    r.started(0.0)
    assert r.died(1.0) == 0.0
    r.started(1.0)
    assert r.died(2.0) == 0.5
    r.started(2.5)
    assert r.died(2.5 + STEADY_S) == 0.0


def test_due_only_once_the_pause_is_over() -> None:
    r = Restarts()
    r.started(0.0)
    r.died(1.0)
    r.started(1.0)
    r.died(2.0)
    assert r.waiting() and not r.due(2.4) and r.due(2.5)
    r.started(2.5)
    assert not r.waiting() and not r.due(10.0)


@dataclass
class FakeProc:
    returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode


@dataclass
class Launcher:
    proc: FakeProc
    launches: int = 0

    def __call__(self) -> None:
        self.launches += 1
        self.proc.returncode = None


def test_tend_restarts_a_dead_child_then_waits_out_its_pause() -> None:
    proc, r = FakeProc(), Restarts()
    launch = Launcher(proc)
    r.started(0.0)
    assert tend("nats-server", proc, r, launch, None, 1.0) == []  # running: nothing to do
    proc.returncode = -9
    said = tend("nats-server", proc, r, launch, None, 40.0, " on nats://127.0.0.1:4222")
    assert said == ["nats-server (exit -9) died; restarted it on nats://127.0.0.1:4222 (its log: None)"]
    assert launch.launches == 1
    proc.returncode = 1  # dies again at once
    assert tend("nats-server", proc, r, launch, None, 40.1)[0].startswith(
        "nats-server (exit 1) died again soon after its start; starting it again in 0.5s")
    assert launch.launches == 1
    assert tend("nats-server", proc, r, launch, None, 40.3) == []
    assert tend("nats-server", proc, r, launch, None, 40.6) == ["nats-server: started it again"]
    assert launch.launches == 2
