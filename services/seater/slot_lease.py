"""A seater replica's lease on one slot of panel ids (`panel_ids.py`), kept in the `bench_ids` KV bucket.

The lease is the key `seater-slot.<n>`, taken with an atomic create and renewed with compare-and-set well
inside the bucket's TTL. A renewal that finds another owner means the lease was lost (this process was cut
off longer than the TTL): the slot is dropped at once and another is claimed. A lease not renewed for half
the TTL (the bus is away) is not trusted either; meanwhile the seater reserves drawn ids in the stream. A
stopping seater deletes its key, so its slot is free for the next replica.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable

import structlog
from nats.js.errors import KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from services.seater.panel_ids import SLOTS, SlotIds
from shared.bus import IDS_TTL_S
from shared.ids import utcnow

log = structlog.get_logger("seater")

RENEW_S = IDS_TTL_S / 10
TRUSTED_S = IDS_TTL_S / 2


def slot_key(slot: int) -> str:
    return f"seater-slot.{slot}"


class SlotLease:
    def __init__(self, kv: KeyValue, instance: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.kv, self.instance, self.clock = kv, instance, clock
        self.ids: SlotIds | None = None
        self._revision = 0
        self._renewed = 0.0
        self._keeping: asyncio.Task[None] | None = None

    async def start(self) -> SlotLease:
        await self.claim()
        self._keeping = asyncio.create_task(self._keep())
        return self

    def held(self) -> SlotIds | None:
        """The slot's ids while the lease is trusted, else None (plans then reserve drawn ids)."""
        if self.ids is None or self.clock() - self._renewed > TRUSTED_S:
            return None
        return self.ids

    async def claim(self) -> None:
        """Take a free slot, in random order so replicas starting together rarely race for the same one."""
        for slot in random.sample(range(SLOTS), SLOTS):
            try:
                self._revision = await self.kv.create(slot_key(slot), self.instance.encode())
            except KeyWrongLastSequenceError:
                continue  # another replica holds it
            self._renewed = self.clock()
            self.ids = SlotIds(slot, utcnow())
            log.info("panel_id_slot_claimed", slot=slot)
            return
        log.warning("panel_id_slots_all_taken", slots=SLOTS)

    async def renew(self) -> None:
        if self.ids is None:
            await self.claim()
            return
        try:
            self._revision = await self.kv.update(slot_key(self.ids.slot), self.instance.encode(),
                                                  last=self._revision)
            self._renewed = self.clock()
        except KeyWrongLastSequenceError:
            log.error("panel_id_slot_lost", slot=self.ids.slot)
            self.ids = None
            await self.claim()

    async def _keep(self) -> None:
        while True:
            await asyncio.sleep(RENEW_S)
            try:
                await self.renew()
            except Exception as exc:  # the bus is away: the lease ages, and is distrusted past TRUSTED_S
                log.warning("panel_id_slot_not_renewed", error=f"{type(exc).__name__}: {exc}")

    async def stop(self) -> None:
        if self._keeping is not None:
            self._keeping.cancel()
            with contextlib.suppress(BaseException):
                await self._keeping
        if self.ids is not None:
            slot, self.ids = self.ids.slot, None
            with contextlib.suppress(Exception):
                await self.kv.delete(slot_key(slot), last=self._revision)
