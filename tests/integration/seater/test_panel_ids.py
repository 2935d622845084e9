"""Panel ids never collide: a replica numbers its plans inside the slot it leases, and a drawn id (while it
holds none) is reserved by the event stream, which tells a second plan drawing a taken id so."""

from __future__ import annotations

from nats.js.kv import KeyValue

from services.seater.panel_ids import SLOTS
from services.seater.service import Seater
from services.seater.slot_lease import TRUSTED_S, SlotLease, slot_key
from shared import bus, subjects
from shared.events import PanelSeated, SeatPlan


def seated(panel: str, alias: str, event_id: str | None = None) -> PanelSeated:
    seat = SeatPlan(call=f"{panel}.member1", seat="member", alias=alias, served=alias, endpoint="e",
                    connection="e")
    return PanelSeated(id=event_id or f"seated:{panel}", panel=panel, collection="bench/core",
                       shape="general", shape_by="test", seats=[seat])


async def test_a_taken_panel_id_is_refused_and_a_free_one_recorded(nc: bus.NATS) -> None:
    seater = Seater(nc, "seater-test")
    panel = "p20261202-120000-abcd"
    assert await seater._record(seated(panel, "alpha")) is True
    # Same id, another plan (another replica drew the same 4 hex digits in the same second).
    assert await seater._record(seated(panel, "bravo", event_id=f"seated:{panel}:other")) is False
    # Same event id again (a retried publish of this very plan) also does not count as a new panel.
    assert await seater._record(seated(panel, "alpha")) is False
    assert await seater._record(seated("p20261202-120000-abce", "bravo")) is True
    info = await nc.jetstream().stream_info("BENCH_EVENTS")
    assert info.state.messages == 2


async def ids_bucket(nc: bus.NATS) -> KeyValue:
    return await nc.jetstream().key_value(subjects.IDS_BUCKET)


async def test_replicas_lease_different_slots_and_a_stopped_one_frees_its_slot(nc: bus.NATS) -> None:
    kv = await ids_bucket(nc)
    leases = [await SlotLease(kv, f"seater-{n}").start() for n in range(SLOTS)]
    try:
        slots = [lease.ids.slot for lease in leases if lease.ids is not None]
        assert sorted(slots) == list(range(SLOTS))  # every replica its own slot, until none is left
        extra = await SlotLease(kv, "seater-extra").start()
        assert extra.ids is None and extra.held() is None  # it reserves drawn ids instead
        await extra.stop()  # held nothing: frees nothing
        late = await SlotLease(kv, "seater-late").start()
        assert late.ids is None
        await leases[0].stop()  # a stopping replica deletes its key
        await late.renew()  # with nothing held, a renewal claims what is free
        assert late.ids is not None and late.ids.slot == slots[0]
        await late.stop()
    finally:
        for lease in leases:
            await lease.stop()


async def test_a_lease_someone_else_took_is_dropped_and_another_slot_claimed(nc: bus.NATS) -> None:
    kv = await ids_bucket(nc)
    lease = await SlotLease(kv, "seater-a").start()
    try:
        assert lease.ids is not None
        lost = lease.ids.slot
        await kv.put(slot_key(lost), b"seater-b")  # the lease lapsed while this replica was cut off
        await lease.renew()
        assert lease.ids is not None and lease.ids.slot != lost
        assert (await kv.get(slot_key(lost))).value == b"seater-b"
    finally:
        await lease.stop()


async def test_a_lease_not_renewed_for_half_the_ttl_is_not_trusted(nc: bus.NATS) -> None:
    now = [1000.0]
    lease = await SlotLease(await ids_bucket(nc), "seater-a", clock=lambda: now[0]).start()
    try:
        assert lease.held() is not None
        now[0] += TRUSTED_S + 1
        assert lease.held() is None
        await lease.renew()
        assert lease.held() is not None
    finally:
        await lease.stop()
