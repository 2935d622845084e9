"""The ledger as a real process on a real NATS: folding, the offload answers (A-9..A-12), duplicates."""

from __future__ import annotations

import time

from nats.errors import TimeoutError as NatsTimeout

from shared import bus, subjects
from shared.events import GatewaySettingsSaved
from shared.natsserver import NatsServer
from tests.integration.ledger.process import LedgerProcess, ask, publish_all, stream_messages
from tests.unit.ledger.factories import answered, completed, cooldown, endpoint, recorded, seated

P = "p20261202-093000-abcd"
M1, M2, M3 = f"{P}.member1", f"{P}.member2", f"{P}.explorer"


async def test_every_event_type_is_folded_into_typed_rows(nc: bus.NATS, ledger: LedgerProcess) -> None:
    last = await publish_all(nc, [
        endpoint(), GatewaySettingsSaved(id="cfg:gw", max_calls=4), seated(P),
        completed(M1, alias="a"), completed(M2, alias="b", status="error", error="HTTP 500"),
        answered(P, [M1, M2]), recorded(M1, "a", True, "looked fine"), cooldown("b"),
    ])
    status = await ask(nc, subjects.RPC_LEDGER_STATUS)
    assert status == {"seq": last, "rows": {"events_applied": 8, "panels": 1, "seats": 2, "verdicts": 1,
                                            "config_changes": 2, "cooldowns": 1, "usage": 2, "route_turns": 0,
                                            "limits_learned": 0, "quota_records": 0, "alerts": 0,
                                            "probes": 0, "job_runs": 0, "suite_answers": 0,
                                            "ledger_position": 1,
                                            "ledger_schema": 1}}
    ledger.stop()
    tables = ledger.snapshot()
    assert tables["ledger_position"] == [(subjects.EVENTS_STREAM, last)]
    assert [row[0] for row in tables["events_applied"]] == list(range(1, 9))
    (panel,) = tables["panels"]
    assert panel[0] == P and panel[1] == 6 and panel[3] == "core" and panel[13] == [M1, M2]  # seq: the answer
    seats = {row[0]: row for row in tables["seats"]}
    assert seats[M2][13:18] == ("error", 1.26, None, "", "HTTP 500") and seats[M2][18:20] == ("other", 500)
    assert [row[4] for row in tables["verdicts"]] == [M1]
    assert all("sk-nope" not in str(row) for row in tables["config_changes"])


async def test_a_verdict_sent_right_after_the_seat_finds_it(nc: bus.NATS, ledger: LedgerProcess) -> None:
    for i in range(20):  # no read-after-write race, however quickly the verdict follows
        call = f"{P}.member{i}"
        await bus.publish_event(nc.jetstream(), completed(call, alias="a"))
        reply = await ask(nc, subjects.RPC_LEDGER_VERDICT, {"call": call, "useful": True})
        assert "error" not in reply, reply
        assert reply["recorded"]["call"] == call and reply["recorded"]["note"] == "member; ok in 1.3s"


async def test_the_same_verdict_twice_writes_nothing_new(nc: bus.NATS, ledger: LedgerProcess) -> None:
    """A-10."""
    await publish_all(nc, [seated(P), completed(M1, alias="a")])
    body = {"call": M1, "useful": True, "note": "checked the race", "real": ["the race"], "false": []}
    first = await ask(nc, subjects.RPC_LEDGER_VERDICT, body)
    assert "error" not in first
    assert first["recorded"] == {"date": first["recorded"]["date"], "model": "a",
                                 "task": "find the race in refresh() (bench/core, code)", "useful": True,
                                 "note": "checked the race", "call": M1, "real": ["the race"], "false": []}
    stored = await stream_messages(nc)
    again = await ask(nc, subjects.RPC_LEDGER_VERDICT, body)
    keeps = await ask(nc, subjects.RPC_LEDGER_VERDICT, {"call": M1, "useful": True, "note": " "})
    assert again == first and keeps == first
    assert await stream_messages(nc) == stored
    flipped = await ask(nc, subjects.RPC_LEDGER_VERDICT, {"call": M1, "useful": False})
    assert flipped["recorded"]["useful"] is False
    assert (flipped["recorded"]["note"], flipped["recorded"]["real"]) == ("checked the race", ["the race"])
    assert await stream_messages(nc) == stored + 1
    assert (await ask(nc, subjects.RPC_LEDGER_STATUS))["rows"]["verdicts"] == 2


async def test_unknown_call_is_404_and_a_bad_body_400(nc: bus.NATS, ledger: LedgerProcess) -> None:
    """A-11 (the gateway checks types first; the ledger still refuses what is not a verdict)."""
    stranger = "p20260101-000000-0000.member1"
    reply = await ask(nc, subjects.RPC_LEDGER_VERDICT, {"call": stranger, "useful": True})
    assert reply["error"]["status"] == 404
    assert "no offload with call id 'p20260101-000000-0000.member1'" in reply["error"]["message"]
    bad = await ask(nc, subjects.RPC_LEDGER_VERDICT, {"call": M1, "useful": "yes"})
    assert bad["error"]["status"] == 400 and "useful" in bad["error"]["message"]
    assert (await ask(nc, subjects.RPC_LEDGER_PENDING, {"calls": "x"}))["error"]["status"] == 400
    assert (await ask(nc, subjects.RPC_LEDGER_RECORD, {}))["error"]["status"] == 400
    assert (await ask(nc, subjects.RPC_LEDGER_RECORD, {"collection": " "}))["error"]["status"] == 400
    assert await stream_messages(nc) == 0


async def test_pending_lists_answered_seats_until_judged(nc: bus.NATS, ledger: LedgerProcess) -> None:
    """A-9."""
    await publish_all(nc, [
        seated(P), completed(M1, alias="a"), completed(M2, alias="b", status="error", error="boom"),
        completed(M3, alias="c", status="empty"),
    ])
    calls = [M3, "p20260101-000000-0000.member1", M2, M1]
    assert await ask(nc, subjects.RPC_LEDGER_PENDING, {"calls": calls}) == {"pending": [M3, M1]}
    await ask(nc, subjects.RPC_LEDGER_VERDICT, {"call": M1, "useful": False})
    assert await ask(nc, subjects.RPC_LEDGER_PENDING, {"calls": calls}) == {"pending": [M3]}


async def test_record_counts_only_judged_seats_of_a_collection(nc: bus.NATS, ledger: LedgerProcess) -> None:
    """A-12."""
    q = "p20261202-093001-0001"
    await publish_all(nc, [
        completed(M1, alias="a", collection="x"), completed(M2, alias="b", collection="x"),
        completed(M3, alias="a", collection="x"), completed(f"{q}.member1", alias="a", collection="xy"),
        completed(f"{q}.member2", alias="b", collection="x"),  # never judged
    ])
    for call, useful, note in [(M1, True, "thicken slab faces"), (M2, False, ""), (M3, False, "other"),
                               (f"{q}.member1", True, "")]:
        body = {"call": call, "useful": useful, "note": note}
        assert "recorded" in (await ask(nc, subjects.RPC_LEDGER_VERDICT, body))
    record = await ask(nc, subjects.RPC_LEDGER_RECORD, {"collection": "bench/x"})
    day = record["aliases"]["a"]["lastAt"]
    assert record == {"collection": "bench/x", "task": "", "aliases": {
        "a": {"useful": 1, "notUseful": 1, "judged": 2, "lastAt": day},
        "b": {"useful": 0, "notUseful": 1, "judged": 1, "lastAt": day},
    }}
    narrowed = await ask(nc, subjects.RPC_LEDGER_RECORD, {"collection": "bench/x", "task": "slab faces"})
    assert narrowed["aliases"] == {"a": {"useful": 1, "notUseful": 0, "judged": 1, "lastAt": day}}
    assert (await ask(nc, subjects.RPC_LEDGER_RECORD, {"collection": "bench/none"}))["aliases"] == {}


async def test_a_seat_completed_twice_is_one_row(nc: bus.NATS, ledger: LedgerProcess) -> None:
    js = nc.jetstream()
    await bus.publish_event(js, completed(M1, answer="from the caller"))
    await bus.publish_event(js, completed(M1, answer="from the caller"))  # same id: stored once
    await bus.publish_event(js, completed(M1, answer="no answer in 420s", event_id=f"seat:{M1}:late"))
    status = await ask(nc, subjects.RPC_LEDGER_STATUS)
    assert status["rows"]["events_applied"] == 2 and status["rows"]["seats"] == 1
    ledger.stop()
    assert [(row[0], row[16]) for row in ledger.snapshot()["seats"]] == [(M1, "from the caller")]


async def test_the_fold_resumes_after_nats_restarts(
    nats_server: NatsServer, nc: bus.NATS, ledger: LedgerProcess
) -> None:
    await publish_all(nc, [completed(M1)])
    assert (await ask(nc, subjects.RPC_LEDGER_STATUS))["rows"]["seats"] == 1
    nats_server.restart()
    end = time.monotonic() + 30
    while True:  # a publish sent while the client reconnects is lost: send it again (same id, stored once)
        try:
            await bus.publish_event(nc.jetstream(), completed(M2), timeout=1)
            break
        except NatsTimeout:
            assert time.monotonic() < end
    while (status := await ask(nc, subjects.RPC_LEDGER_STATUS, wait_s=30)).get("seq") != 2:
        assert status["error"]["status"] == 503 and time.monotonic() < end, status
    assert status["rows"]["seats"] == 2 and status["rows"]["events_applied"] == 2
