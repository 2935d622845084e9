"""docs/ledger.md's table reference is the schema's: regenerate it (`python -m services.ledger.schema_doc`)
when a table changes."""

from __future__ import annotations

from services.ledger import schema, schema_doc


def test_the_page_lists_every_table_as_declared() -> None:
    page = schema_doc.PAGE.read_text()
    assert schema_doc.written(page) == page, "run: python -m services.ledger.schema_doc"
    for table in schema.TABLES:
        assert f"### `{table.name}`" in page
        assert all(f"| `{name}` | `{kind}` |" in page for name, kind in table.columns.items())


def test_every_table_says_which_events_fill_it() -> None:
    assert set(schema_doc.FILLED_BY) == {t.name for t in schema.TABLES}
