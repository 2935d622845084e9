"""C-16 alerts in the ledger: each raise and clear is one `alerts` row (and one `config_changes` row), so
any batching folds to the same table; a held call (U-5) is a `refused` usage line with no attempt."""

from __future__ import annotations

from services.ledger.fold import AlertRow, fold_batch
from shared.events import AlertCleared, AlertRaised
from tests.unit.ledger.factories import T0

KEY = "model:paid:vendor/fast:free"
RAISED = AlertRaised(id="cfg:a1", at=T0, by="admin", key=KEY, kind="went paid", message="priced",
                     action="retire it", alias="fast")
CLEARED = AlertCleared(id="cfg:a2", at=T0, by="catalog", key=KEY)


def test_a_raise_and_a_clear_are_two_rows_and_two_changes() -> None:
    rows = fold_batch([(3, RAISED), (4, CLEARED), (5, RAISED)])  # a redelivered event counts once
    assert list(rows.alerts.values()) == [
        AlertRow(id="cfg:a1", seq=3, at=T0, by="admin", key=KEY, state="raised", kind="went paid",
                 message="priced", action="retire it", alias="fast", aliases=[]),
        AlertRow(id="cfg:a2", seq=4, at=T0, by="catalog", key=KEY, state="cleared", kind=None, message=None,
                 action=None, alias=None, aliases=None),
    ]
    assert set(rows.config_changes) == {"cfg:a1", "cfg:a2"}


def test_any_batching_gives_the_same_rows() -> None:
    whole = fold_batch([(3, RAISED), (4, CLEARED)]).alerts
    split = {**fold_batch([(3, RAISED)]).alerts, **fold_batch([(4, CLEARED)]).alerts}
    assert whole == split
