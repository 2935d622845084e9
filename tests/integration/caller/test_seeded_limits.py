"""A limit set after the bench has been sending counts what was sent (L-2: the ledger's attempts): real NATS,
a real ledger process, real caller processes and the fake provider."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from services.caller.seeding import CONNECTION
from services.caller.window_store import WindowStore
from shared import bus
from shared.events import LimitsSaved
from shared.natsserver import NatsServer
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess
from tests.integration.caller.test_caller_service import caller_env, send
from tests.integration.caller.test_limits_across_callers import REFUSED, completions, seat
from tests.integration.ledger.process import LedgerProcess

MODELS = ("seed-a", "seed-b")


@pytest.fixture
async def ledger(nats_server: NatsServer, nc: bus.NATS, tmp_path: Path) -> AsyncIterator[LedgerProcess]:
    proc = LedgerProcess(nats_server, tmp_path / "ledger")
    await proc.start(nc)
    try:
        yield proc
    finally:
        proc.stop()


async def test_a_daily_limit_set_after_six_calls_lets_two_more_through(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess], ledger: LedgerProcess
) -> None:
    unlimited = [callers(caller_env()) for _ in range(2)]
    before = [seat(provider, "p20261202-140000-aaaa", n, MODELS[n % 2], "seeded") for n in range(1, 7)]
    await asyncio.gather(*(send(nc, c) for c in before))
    assert all(e.attempts == 1 for e in await completions(nc, "p20261202-140000-aaaa", 6))
    store = await WindowStore.open(nc)
    assert (await store.read("seeded"))[1] == 0  # nothing bound them: the windows never counted them

    # The limit as the admin API saves it; callers started after it have folded it before taking calls.
    for proc in unlimited:
        proc.stop()
    limit = LimitsSaved(id="cfg:rpd8", scope="connection", name="seeded", rpd=8)
    await bus.publish_event(nc.jetstream(), limit)
    for _ in range(2):
        callers(caller_env())
    after = [seat(provider, "p20261202-140000-bbbb", n, MODELS[n % 2], "seeded") for n in range(1, 7)]
    await asyncio.gather(*(send(nc, c) for c in after))
    events = await completions(nc, "p20261202-140000-bbbb", 6)

    sent = [e for e in events if e.attempts > 0]
    refused = [e for e in events if e.paced == "refused"]
    assert len(sent) == 2 and len(refused) == 4 and all(e.status == "ok" for e in sent)
    words = "connection seeded allows 8 requests per day (your limit) and 8 were used; try again in 24h"
    assert all(e.attempts == 0 and e.error == REFUSED + words for e in refused), [e.error for e in refused]
    assert len([r for r in provider.requests() if r["model"] in MODELS]) == 6 + 2
    doc, _ = await store.read("seeded")
    await store.close()
    assert CONNECTION in doc.seeded and sum(e.requests for e in doc.entries) == 8
