"""`bench report` on a real DuckDB file: offload seats per model and collection in the period, latest
verdicts, latency over answers, failures by class; probes and seats outside the period left out."""

from __future__ import annotations

from datetime import timedelta

from services.ledger.store import Store
from shared.commands import Price, ReportRequest
from tests.integration.ledger.process import apply_each
from tests.unit.ledger.factories import T0, completed, recorded

P = "p20261202-093000-abcd"


def test_report_per_model_and_collection(store: Store) -> None:
    apply_each(
        store,
        completed(f"{P}.m1", alias="a", seconds=1.0),
        completed(f"{P}.m2", alias="a", seconds=3.0),
        completed(f"{P}.m3", alias="a", status="error", error="429 Too Many Requests", seconds=0.2),
        completed(f"{P}.m4", alias="b", collection="docs", seconds=2.0),
        completed(f"{P}.m5", alias="b", purpose="probe"),  # not an offload
        completed(f"{P}.m6", alias="b", at=T0 - timedelta(days=40)),  # before the period
        recorded(f"{P}.m1", "a", useful=False, n=1),
        recorded(f"{P}.m1", "a", useful=True, n=2),  # the latest verdict counts
        recorded(f"{P}.m4", "b", useful=False),
    )
    req = ReportRequest(since=T0 - timedelta(days=30), until=T0 + timedelta(days=1),
                        prices={"a": Price(input=1000, output=1000)})
    out = store.report(req)
    a, b = out.models
    assert (a.name, a.seats, a.answered, a.judged, a.useful, a.useful_rate) == ("a", 3, 2, 1, 1, 1.0)
    assert (a.p50_s, a.p95_s, a.failures) == (2.0, 2.9, {"capacity": 1})
    assert (a.tokens_in, a.tokens_out, a.cost) == (36, 102, 0.138)
    assert (b.name, b.seats, b.useful_rate, b.judged_share, b.cost) == ("b", 1, 0.0, 1.0, None)
    assert [(c.name, c.seats, c.judged) for c in out.collections] == [("core", 3, 1), ("docs", 1, 1)]
    empty = store.report(ReportRequest(since=T0 + timedelta(days=1), until=T0 + timedelta(days=2)))
    assert empty.models == [] and empty.collections == []
