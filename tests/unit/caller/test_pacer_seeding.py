"""The pacer's seeding decisions over an in-memory `bench_limits` (compare-and-set kept): the ledger is
asked once per unseeded scope, never for an unbound or seeded call, and its silence never holds a call."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from services.caller.limit_book import LimitBook
from services.caller.pacer import Pacer
from services.caller.pacing import Windows
from services.caller.seeding import CONNECTION
from shared.commands import PacingReply, SeatCall
from shared.config_state import ConfigState
from shared.events import LimitsSaved

NOW = datetime(2026, 12, 2, 12, 0, 0, tzinfo=UTC).timestamp()


class MemoryStore:
    """`WindowStore`'s contract: a document per connection with a revision, written only if unchanged."""

    def __init__(self) -> None:
        self.docs: dict[str, tuple[bytes, int]] = {}
        self.writes = 0

    async def read(self, connection: str) -> tuple[Windows, int]:
        raw, revision = self.docs.get(connection, (b"", 0))
        return Windows.from_json(raw), revision

    async def write(self, connection: str, doc: Windows, revision: int) -> bool:
        if self.docs.get(connection, (b"", 0))[1] != revision:
            return False
        self.docs[connection] = (doc.to_json(), revision + 1)
        self.writes += 1
        return True


class Ledger:
    """What the ledger answers (None: it is silent), and who asked."""

    def __init__(self, reply: PacingReply | None) -> None:
        self.reply, self.asked = reply, 0

    async def fetch(self, connection: str) -> PacingReply | None:
        self.asked += 1
        return self.reply


def sent_before(count: int, alias: str = "a") -> PacingReply:
    rows = [(NOW - 600 + n, alias, 1, 20, f"p{n}.member1") for n in range(count)]
    return PacingReply(at=NOW, rows=rows, month="2026-12", month_requests=count)


def rig(reply: PacingReply | None, **limits: Any) -> tuple[Pacer, MemoryStore, Ledger, ConfigState]:
    config = ConfigState()
    if limits:
        config.apply(LimitsSaved(id="cfg:1", scope="connection", name="groq", **limits))
    store, ledger = MemoryStore(), Ledger(reply)
    pacer = Pacer(store, LimitBook(config), ledger, clock=lambda: NOW)  # type: ignore[arg-type]
    return pacer, store, ledger, config


def call(n: int, alias: str = "a") -> SeatCall:
    return SeatCall.model_validate({
        "call": f"q.member{n}", "panel": "q", "seat": "member", "alias": alias, "served": alias,
        "endpoint": "groq", "base": "http://localhost:1/v1", "connection": "groq",
        "messages": [{"role": "user", "content": "hi"}], "deadline": NOW + 30,
    })


async def test_the_calls_sent_before_a_limit_count_against_it() -> None:
    pacer, store, ledger, _ = rig(sent_before(8), rpd=10)
    outcomes = [await pacer.admit(call(n), 10, f"slot{n}") for n in range(4)]
    assert [a.paced for a in outcomes] == ["sent", "sent", "refused", "refused"]
    assert outcomes[2].refusal.startswith(
        "Error: client failed: rate limit (not sent; paced by the bench): connection groq allows 10 requests "
        "per day (your limit) and 10 were used; try again in ")
    assert ledger.asked == 1  # once seeded, never again
    doc, _ = await store.read("groq")
    assert doc.seeded == {CONNECTION} and doc.months == {"2026-12": 10}


async def test_an_unbound_call_neither_asks_nor_writes() -> None:
    pacer, store, ledger, _ = rig(sent_before(8))
    assert (await pacer.admit(call(1), 10, "s")).paced == "sent"
    assert (ledger.asked, store.writes) == (0, 0)


async def test_a_silent_ledger_lets_the_call_go_unseeded_and_a_later_call_asks_again() -> None:
    pacer, store, ledger, _ = rig(None, rpd=10)
    assert (await pacer.admit(call(1), 10, "s1")).ticket is not None
    doc, _ = await store.read("groq")
    assert doc.seeded == set() and len(doc.entries) == 1
    ledger.reply = sent_before(9)
    assert (await pacer.admit(call(2), 10, "s2")).paced == "refused"  # 9 before + the one just sent
    assert ledger.asked == 2


async def test_a_limit_lifted_drops_the_mark_so_the_next_limit_seeds_again() -> None:
    pacer, store, ledger, config = rig(sent_before(3), rpm=50)
    await pacer.admit(call(1), 10, "s1")
    config.apply(LimitsSaved(id="cfg:2", scope="connection", name="groq"))  # lifted
    await pacer.admit(call(2), 10, "s2")
    doc, _ = await store.read("groq")
    assert doc.seeded == set() and ledger.asked == 1
    writes = store.writes
    await pacer.admit(call(3), 10, "s3")
    assert store.writes == writes  # the mark is gone already: nothing more to write
    config.apply(LimitsSaved(id="cfg:3", scope="connection", name="groq", rpm=50))
    await pacer.admit(call(4), 10, "s4")
    assert ledger.asked == 2


async def test_a_model_limit_seeds_only_its_alias() -> None:
    pacer, store, ledger, config = rig(sent_before(4, "b"))
    config.apply(LimitsSaved(id="cfg:m", scope="model", name="a", rpd=3))
    admission = await pacer.admit(call(1, "a"), 10, "s1")  # b's calls are not a's
    assert admission.paced == "sent" and ledger.asked == 1
    doc, _ = await store.read("groq")
    assert doc.seeded == {"a"} and [e.alias for e in doc.entries] == ["a"]
