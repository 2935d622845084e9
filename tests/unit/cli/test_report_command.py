"""`bench report`: options → query, reply → two tables, the reply verbatim (`--json`) or CSV (`--csv`)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from typer.testing import Result

from tests.unit.cli.conftest import FakeServer
from tests.unit.cli.test_ledger_views import WIDE, rows_of

Bench = Callable[..., Result]

LINE = {"seats": 4, "answered": 3, "judged": 2, "useful": 1, "useful_rate": 0.5, "judged_share": 0.5,
        "p50_s": 1.2, "p95_s": 2.5, "tokens_in": 100, "tokens_out": 50, "cost": None,
        "failures": {"timeout": 1, "capacity": 2}}
REPORT: dict[str, Any] = {"ok": True, "since": "2026-11-01T00:00:00Z", "until": "2026-12-01T00:00:00Z",
                          "models": [{"name": "a", **LINE}], "collections": [{"name": "core", **LINE}]}


def test_report_asks_for_the_period_and_prices(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/report", body=REPORT)
    result = bench("report", "--since", "2026-11-01", "--price", "a:1:2", "--price", "b:0:0", env=WIDE)
    assert result.exit_code == 0, result.output
    query = parse_qs(server.seen[-1].url.query.decode())
    assert query == {"since": ["2026-11-01T00:00:00"], "price": ["a:1:2", "b:0:0"]}
    row = ["a", "4", "3", "2", "1", "0.5", "0.5", "1.2", "2.5", "100", "50", "", "capacity 2, timeout 1"]
    assert rows_of(result.stdout, "models (2026-11-01T00:00:00Z – 2026-12-01T00:00:00Z)") == [row]


def test_report_as_json_or_csv(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/report", body=REPORT)
    assert json.loads(bench("report", "--json").stdout) == REPORT
    lines = list(csv.reader(io.StringIO(bench("report", "--csv").stdout)))
    assert lines[0][:3] == ["level", "name", "seats"]
    assert [line[:3] for line in lines[1:]] == [["model", "a", "4"], ["collection", "core", "4"]]
    assert lines[1][-1] == "capacity 2, timeout 1"


def test_a_bad_time_is_a_usage_error(bench: Bench, server: FakeServer) -> None:
    assert bench("report", "--until", "soonish").exit_code == 2 and not server.seen
