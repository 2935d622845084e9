"""The event stream itself reserves panel ids: a second plan drawing a taken id is told so."""

from __future__ import annotations

from services.seater.service import Seater
from shared import bus
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
