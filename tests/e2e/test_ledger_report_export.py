"""`bench report` and `bench ledger export` against a whole stack (issue 23): the report counts a panel's
seats per model and collection; the export goes ledger → bus → gateway (a streamed tar) → CLI → Parquet
that DuckDB reads back, and a second export adds only what is new."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import httpx
from typer.testing import CliRunner

from cli.main import app
from cli.stack import Stack

COLLECTION = "rex-panel"
MEMBERS = ("rex-a", "rex-b")


def ask_panel(http: httpx.Client) -> list[str]:
    reply = http.post("/v1/chat/completions", json={
        "model": f"bench/{COLLECTION}", "messages": [{"role": "user", "content": "report and export"}]})
    assert reply.status_code == 200, reply.text
    return [seat["call"] for seat in reply.json()["bench"]["seats"]]


def bench(stack: Stack, *args: str) -> Any:
    result = CliRunner().invoke(app, ["--url", stack.url, "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def seats_in(folder: Path) -> list[tuple[str, int]]:
    con = duckdb.connect()
    try:
        return con.execute(f"SELECT call, seq FROM read_parquet('{folder}/seats/*/*.parquet', "
                           "hive_partitioning=true) ORDER BY seq").fetchall()
    finally:
        con.close()


def test_report_and_incremental_export(stack: Stack, tmp_path: Path) -> None:
    with httpx.Client(base_url=stack.url, timeout=120) as http:
        for alias in MEMBERS:
            added = http.post("/api/models", json={"served": alias, "endpoint": "fake", "ad_hoc": True})
            assert added.is_success, added.text
        assert http.post("/api/collection", json={"name": COLLECTION, "members": list(MEMBERS)}).is_success
        first_calls = ask_panel(http)

        report = bench(stack, "report", "--price", "rex-a:1:2")
        models = {m["name"]: m for m in report["models"]}
        assert all(models[alias]["seats"] >= 1 for alias in MEMBERS)
        assert models["rex-a"]["cost"] is not None and models["rex-b"]["cost"] is None
        assert any(c["name"] == COLLECTION for c in report["collections"])
        refused = http.get("/api/report", params={"since": "2026-12-02", "until": "2026-12-01"})
        assert refused.status_code == 400 and refused.json()["ok"] is False

        first = bench(stack, "ledger", "export", "--parquet", str(tmp_path))
        exported = seats_in(tmp_path)
        assert set(first_calls) <= {call for call, _ in exported}
        assert first["rows"]["seats"] == len(exported)

        second_calls = ask_panel(http)
        second = bench(stack, "ledger", "export", "--parquet", str(tmp_path))
        again = seats_in(tmp_path)
        new = [call for call, seq in again if seq > first["marks"]["seats"]]
        assert set(second_calls) <= set(new) and second["rows"]["seats"] == len(new)
        assert len(again) == len({call for call, _ in again})  # every seat once across the two exports
        manifest = json.loads((tmp_path / "manifest.json").read_text())
        assert manifest["marks"]["seats"] == second["marks"]["seats"] and len(manifest["exports"]) == 2
        assert http.get("/api/ledger/export", params={"after": "seats:x"}).status_code == 400


def test_the_openapi_document_types_report_and_export(stack: Stack) -> None:
    with httpx.Client(base_url=stack.url, timeout=60) as http:
        paths = http.get("/openapi.json").json()["paths"]
    report = paths["/api/report"]["get"]
    answer = report["responses"]["200"]["content"]["application/json"]["schema"]
    assert answer["$ref"].endswith("/ReportReply")
    assert {p["name"] for p in report["parameters"]} == {"since", "until", "price"}
    export = paths["/api/ledger/export"]["get"]
    assert list(export["responses"]["200"]["content"]) == ["application/x-tar"]
    after = next(p for p in export["parameters"] if p["name"] == "after")
    assert after["schema"]["items"]["pattern"] == "^.+:[0-9]{1,18}$"
    refused = export["responses"]["400"]["content"]
    assert list(refused) == ["application/json"]
    assert refused["application/json"]["schema"]["$ref"].endswith("/ErrorReply")
