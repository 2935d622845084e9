"""Read-your-config for calls: when a call waits for the caller's config fold; the wait is bounded."""

from __future__ import annotations

from structlog.testing import capture_logs

from services.caller.config_wait import CONFIG_WAIT_S, ConfigWait, behind


class StubFold:
    """A fold at `seq`; records each wait asked of it, and times out when told to."""

    def __init__(self, seq: int, times_out: bool = False) -> None:
        self.seq, self.times_out = seq, times_out
        self.waits: list[tuple[int, float]] = []

    async def wait_for(self, seq: int, timeout: float = 10.0) -> None:
        self.waits.append((seq, timeout))
        if self.times_out:
            raise TimeoutError
        self.seq = seq


def test_a_call_waits_only_for_a_position_the_fold_has_not_reached() -> None:
    assert behind(folded=7, asked=8)
    assert not behind(folded=7, asked=7)
    assert not behind(folded=7, asked=3)
    assert not behind(folded=0, asked=0)  # an old message (no position) never waits
    assert not ConfigWait(StubFold(7)).behind(7)
    assert ConfigWait(StubFold(7)).behind(9)


async def test_reaching_a_position_waits_on_the_fold_within_the_bound() -> None:
    fold = StubFold(4)
    await ConfigWait(fold).reach(9)
    assert fold.waits == [(9, CONFIG_WAIT_S)]
    assert fold.seq == 9


async def test_a_fold_that_never_gets_there_lets_the_call_go_on_with_a_warning() -> None:
    fold = StubFold(4, times_out=True)
    with capture_logs() as logs:
        await ConfigWait(fold, wait_s=0.5).reach(9)
    assert fold.waits == [(9, 0.5)]
    assert [(e["event"], e["log_level"], e["asked"], e["folded"]) for e in logs] == [
        ("config_not_caught_up", "warning", 9, 4)
    ]
