"""Read-your-config for calls: each call carries the config position the gateway built it on
(`config_seq`), and the caller decides it (free-tier guard U-5, user limits L-1) only once its own config
fold reached that position. An alert raised or a limit saved a moment before the call is then never missed.

The wait is bounded: a fold that does not get there within CONFIG_WAIT_S (a slow bus, or a position from
a stream since replaced) lets the call go on with the config it has, and says so in a warning.
"""

from __future__ import annotations

from typing import Protocol

import structlog

log = structlog.get_logger("caller")

CONFIG_WAIT_S = 2.0


def behind(folded: int, asked: int) -> bool:
    """Whether a call built at config position `asked` must wait for a fold at `folded` (0 asks nothing)."""
    return asked > folded


class Fold(Protocol):
    """What of `shared.bus.Projection` the wait needs."""

    seq: int

    async def wait_for(self, seq: int, timeout: float = ...) -> None: ...


class ConfigWait:
    """The caller's config fold seen as a position calls can wait for."""

    def __init__(self, fold: Fold, wait_s: float = CONFIG_WAIT_S) -> None:
        self.fold, self.wait_s = fold, wait_s

    def behind(self, asked: int) -> bool:
        """Checked before any await, so a call whose config is already folded costs nothing."""
        return behind(self.fold.seq, asked)

    async def reach(self, asked: int) -> None:
        """Wait until the fold reached `asked`, at most `wait_s`; then the call goes on either way."""
        try:
            await self.fold.wait_for(asked, self.wait_s)
        except TimeoutError:
            log.warning("config_not_caught_up", asked=asked, folded=self.fold.seq, waited_s=self.wait_s)
