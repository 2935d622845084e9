"""The ledger process's report and export over a real NATS (`bench report`, `bench ledger export`)."""

from __future__ import annotations

from datetime import timedelta

from shared import bus, subjects
from tests.integration.ledger.process import LedgerProcess, ask, publish_all
from tests.unit.ledger.factories import T0, completed, recorded

P = "p20261202-093000-abcd"


async def test_report_over_the_bus(nc: bus.NATS, ledger: LedgerProcess) -> None:
    await publish_all(nc, [completed(f"{P}.member1", alias="a"), completed(f"{P}.member2", alias="b"),
                           recorded(f"{P}.member1", "a", useful=True)])
    period = {"since": (T0 - timedelta(days=1)).isoformat(), "until": (T0 + timedelta(days=1)).isoformat()}
    reply = await ask(nc, subjects.RPC_LEDGER_REPORT, {**period, "prices": {"a": {"input": 1, "output": 1}}})
    models = [(m["name"], m["seats"], m["useful_rate"]) for m in reply["models"]]
    assert models == [("a", 1, 1.0), ("b", 1, None)]
    assert [(c["name"], c["seats"], c["cost"]) for c in reply["collections"]] == [("core", 2, None)]
    backwards = {"since": period["until"], "until": period["since"]}
    assert (await ask(nc, subjects.RPC_LEDGER_REPORT, backwards))["error"]["status"] == 400
