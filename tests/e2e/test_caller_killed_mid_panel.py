"""Issue 2's fault test on the whole stack: a caller killed while it holds a seat costs the client nothing.

Two callers share a panel's five seats; the one holding seats is SIGKILLed while the provider thinks. The
work queue redelivers its seats to the other caller, the client (the official `openai` SDK) gets every
seat's answer, and the ledger holds exactly one completion per seat.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
from openai import OpenAI

from cli.stack import Child, Stack
from shared.natsserver import free_port
from tests.e2e.conftest import running, wait_until
from tests.fakes.provider import FakeProvider

MEMBERS = ["kill-a1", "kill-b2", "kill-c3"]
POOL = ["kill-d4", "kill-e5"]
THINK_MS = 4000  # long enough to kill a caller while it waits on the provider


def seat_requests(provider: FakeProvider) -> list[dict[str, Any]]:
    return [r for r in provider.requests() if r["path"].endswith("/chat/completions")]


def started_calls(child: Child) -> set[str]:
    """The calls this caller logged starting (its log is at debug level in this test)."""
    lines = [json.loads(x) for x in child.log_path.read_text().splitlines() if x.startswith("{")]
    return {x["call"] for x in lines if x.get("event") == "call_started"}


def test_a_caller_killed_holding_seats_loses_nothing(tmp_path: Path) -> None:
    provider = FakeProvider(models={m: {"latency_ms": THINK_MS} for m in MEMBERS + POOL}).start()
    stack = Stack(
        home=tmp_path / "home",
        port=free_port(),
        replicas={"caller": 2},
        extra_env={"BENCH_LOG_LEVEL": "DEBUG"},
    )
    try:
        with running(stack), httpx.Client(base_url=stack.url, timeout=30) as admin:
            for path, body in (
                [("/api/endpoint", {"name": "fake", "base": provider.base_url})]
                + [("/api/models", {"served": m, "endpoint": "fake"}) for m in MEMBERS + POOL]
                + [("/api/collection", {"name": "kill", "members": MEMBERS})]
            ):
                assert admin.post(path, json=body).status_code == 200
            reply: dict[str, Any] = {}

            def ask() -> None:
                client = OpenAI(base_url=stack.url + "/v1", api_key="unused", timeout=120, max_retries=0)
                done = client.chat.completions.create(
                    model="bench/kill", messages=[{"role": "user", "content": "who holds my seat?"}]
                )
                reply["bench"] = (done.model_extra or {})["bench"]

            asking = threading.Thread(target=ask)
            asking.start()
            callers = [stack.find("caller", 0), stack.find("caller", 1)]
            wait_until(lambda: len(seat_requests(provider)) >= 5, what="five seats at the provider")
            holding = {c.name: started_calls(c) for c in callers}
            victim = max(callers, key=lambda c: len(holding[c.name]))
            assert holding[victim.name], holding
            assert victim.proc is not None
            victim.signal(9)
            victim.proc.wait(10)
            asking.join(120)
            assert not asking.is_alive()
            seats = reply["bench"]["seats"]
            assert len(seats) == 5 and all(s["status"] == "ok" for s in seats), seats
            # The victim's seats were called again by the survivor.
            assert len(seat_requests(provider)) == 5 + len(holding[victim.name])
            panel = reply["bench"]["panel"]
            counted = admin.post(
                "/api/sql",
                json={
                    "sql": (
                        f"SELECT call, count(*) AS n FROM seats WHERE panel = '{panel}' "
                        "GROUP BY call ORDER BY call"
                    )
                },
            )
            assert counted.status_code == 200, counted.text
            rows = counted.json()["rows"]
            assert [row[1] for row in rows] == [1] * 5 and {row[0] for row in rows} == {
                s["call"] for s in seats
            }
    finally:
        provider.stop()
