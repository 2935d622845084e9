"""Panel ids a seater can hand out without asking the stream first. Pure: no I/O.

C-12 gives a panel id four hex digits a second. They are cut into 16 blocks of 4096: blocks 0 to 14 are
slots, each leased by one seater replica at a time (`slot_lease.py`), which numbers its panels in order
inside its block; no other replica can draw those ids, so the plan's reply need not wait for the stream to
confirm the id. Block 15 is for drawn ids, used while a seater holds no slot: those are random, and each is
reserved in the stream before its plan is answered.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

BLOCK = 0x1000
SLOTS = 15
DRAWN_BLOCK = SLOTS  # f000-ffff
# A slot taken over from a replica that just let it go is used from a later second than any that replica
# could have numbered in, with room for the two machines' clocks to differ.
SETTLE = timedelta(seconds=2)


def panel_id(at: datetime, number: int) -> str:
    return f"p{at:%Y%m%d-%H%M%S}-{number:04x}"


def drawn_id(at: datetime) -> str:
    """A random id from the drawn block; it still has to be reserved in the stream."""
    return panel_id(at, DRAWN_BLOCK * BLOCK + secrets.randbelow(BLOCK))


class SlotIds:
    """The ids of one slot's block, in order within each second; never the same id twice in this process."""

    def __init__(self, slot: int, claimed: datetime) -> None:
        if not 0 <= slot < SLOTS:
            raise ValueError(f"slot {slot} is not one of the {SLOTS} slots")
        self.slot = slot
        self.usable_from = claimed + SETTLE
        self._second: datetime | None = None
        self._next = 0

    def take(self, now: datetime) -> str | None:
        """The next id for a plan made at `now` (UTC, never earlier than the last call's); None while the
        slot settles after its claim or once this second's 4096 ids are spent."""
        if now < self.usable_from:
            return None
        second = now.replace(microsecond=0)
        if second != self._second:
            self._second, self._next = second, 0
        if self._next >= BLOCK:
            return None
        number = self.slot * BLOCK + self._next
        self._next += 1
        return panel_id(now, number)
