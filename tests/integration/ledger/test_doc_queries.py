"""docs/ledger.md's example queries run as they are through the SQL view on a ledger with rows."""

from __future__ import annotations

import re

from services.ledger import schema_doc
from services.ledger.store import Store
from tests.integration.ledger.process import apply_each
from tests.unit.ledger.factories import answered, completed, recorded, route_turn, seated

P = "p20261202-093000-abcd"


def test_every_example_query_answers(store: Store) -> None:
    apply_each(store, seated(P), completed(f"{P}.member1", alias="model-a"),
               completed(f"{P}.member2", alias="b", status="error", error="429 Too Many Requests"),
               answered(P, [f"{P}.member1"]), recorded(f"{P}.member1", "model-a", useful=True),
               route_turn("r20261202-093000-beef", 1, alias="model-a"))
    queries = re.findall(r"```sql\n(.*?)```", schema_doc.PAGE.read_text(), re.DOTALL)
    assert len(queries) >= 5
    for query in queries:
        if "DIR/" in query:  # reads an export folder, not the ledger
            continue
        reply = store.sql(query, 100)
        assert reply.ok, (query, reply.error)
        assert reply.rows or "now()" in query, query  # the rows are of 2026-12-02
