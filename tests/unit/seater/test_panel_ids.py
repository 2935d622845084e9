"""Panel ids from a leased slot: in order within a second, inside the slot's block, not before it settles."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.seater.panel_ids import BLOCK, DRAWN_BLOCK, SETTLE, SLOTS, SlotIds, drawn_id
from shared.ids import PANEL_RE

CLAIMED = datetime(2026, 12, 2, 9, 30, 0, 250_000, tzinfo=UTC)
READY = CLAIMED + SETTLE


def number(panel: str) -> int:
    assert PANEL_RE.match(panel), panel
    return int(panel.rsplit("-", 1)[1], 16)


def test_a_slot_numbers_its_panels_in_order_inside_its_block() -> None:
    ids = SlotIds(3, CLAIMED)
    taken = [ids.take(READY + timedelta(microseconds=n)) for n in range(3)]
    assert [number(p) for p in taken if p] == [3 * BLOCK, 3 * BLOCK + 1, 3 * BLOCK + 2]
    assert all(p and p.startswith("p20261202-093002-") for p in taken)


def test_each_second_starts_again_and_a_spent_second_gives_nothing() -> None:
    ids = SlotIds(SLOTS - 1, CLAIMED)
    second = READY.replace(microsecond=0) + timedelta(seconds=1)
    spent = [ids.take(second + timedelta(microseconds=n)) for n in range(BLOCK)]
    assert number(spent[-1] or "") == SLOTS * BLOCK - 1  # the slot's last id: its block ends there
    assert ids.take(second + timedelta(microseconds=BLOCK)) is None
    later = ids.take(second + timedelta(seconds=1))
    assert later is not None and number(later) == (SLOTS - 1) * BLOCK


def test_no_id_while_the_slot_settles() -> None:
    ids = SlotIds(0, CLAIMED)
    assert ids.take(CLAIMED) is None and ids.take(READY - timedelta(microseconds=1)) is None
    assert ids.take(READY) is not None


def test_drawn_ids_come_from_the_block_no_slot_uses() -> None:
    drawn = {number(drawn_id(READY)) for _ in range(200)}
    assert all(DRAWN_BLOCK * BLOCK <= n < (DRAWN_BLOCK + 1) * BLOCK for n in drawn)
    assert len(drawn) > 100  # random, not one fixed id


@pytest.mark.parametrize("slot", [-1, SLOTS])
def test_only_the_fifteen_slots_exist(slot: int) -> None:
    with pytest.raises(ValueError):
        SlotIds(slot, CLAIMED)
