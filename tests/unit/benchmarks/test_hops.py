"""The hop timeline (`benchmarks/hops.py`) is only as good as its stamps: each point stamped where it says
(entry or exit, sync or async), a module stamped when it is imported, and the timeline read per request."""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import hops_marks
from benchmarks.hops import timeline
from benchmarks.hops_marks import StampingFinder, Stamps, stamped


def labels(log: Path) -> list[str]:
    return [line.split(" ", 2)[2] for line in log.read_text().splitlines()]


def test_entry_and_exit_stamps_come_before_and_after_the_call(tmp_path: Path) -> None:
    log = tmp_path / "stamps.log"
    stamp = Stamps(str(log))
    calls: list[str] = []

    def work() -> None:
        stamp("inside")
        calls.append("sync")

    async def later() -> None:
        await asyncio.sleep(0)
        stamp("inside async")

    stamped(work, "before", "entry", stamp)()
    stamped(work, "after", "exit", stamp)()
    asyncio.run(stamped(later, "async after", "exit", stamp)())
    assert labels(log) == ["before", "inside", "inside", "after", "inside async", "async after"]
    assert calls == ["sync", "sync"]


def test_an_asgi_send_is_named_by_its_message(tmp_path: Path) -> None:
    log = tmp_path / "stamps.log"
    stamp = Stamps(str(log))

    async def send(self: object, message: dict[str, object]) -> None:
        return None

    wrapped = stamped(send, "gateway writes {message}", "entry", stamp)
    for message in ({"type": "http.response.start"}, {"type": "http.response.body", "more_body": True},
                    {"type": "http.response.body"}):
        asyncio.run(wrapped(None, message))
    assert labels(log) == ["gateway writes headers", "gateway writes body", "gateway writes the end"]


@pytest.fixture
def stamped_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "hops_probe.py").write_text(
        "def hello():\n    return 'hi'\n\n"
        "class Probe:\n    def ask(self):\n        return self.shout('x')\n\n"
        "    @staticmethod\n    def shout(word):\n        return word.upper()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(hops_marks, "POINTS", (("hops_probe", "hello", "probe said hello", "entry"),
                                               ("hops_probe", "Probe.shout", "probe shouted", "exit")))
    log = tmp_path / "stamps.log"
    finder = StampingFinder(Stamps(str(log)))
    sys.meta_path.insert(0, finder)
    try:
        yield log
    finally:
        sys.meta_path.remove(finder)
        sys.modules.pop("hops_probe", None)


def test_a_module_is_stamped_when_it_is_imported(stamped_module: Path) -> None:
    probe = importlib.import_module("hops_probe")
    assert probe.hello() == "hi"
    assert probe.Probe().ask() == "X"  # a static method stays one: no `self` handed to it
    assert labels(stamped_module) == ["probe said hello", "probe shouted"]


def test_the_timeline_is_per_request_medians_in_order(tmp_path: Path) -> None:
    log = tmp_path / "stamps.log"
    lines = []
    for n, (hop, work) in enumerate([(0.4, 0.1), (0.4, 0.1), (0.6, 0.3), (0.5, 0.2)]):
        t = 100.0 + n
        lines += [f"{t:.6f} 9 client sends", f"{t + hop / 1000:.6f} 7 gateway hears",
                  f"{t + (hop + work) / 1000:.6f} 7 gateway asks",
                  f"{t + (hop + 2 * work) / 1000:.6f} 7 gateway asks"]
    log.write_text("\n".join(lines) + "\n")
    rows = timeline(log, {7: "gateway-0"})  # the first request is a warm-up: left out
    assert [(label, process, times) for _, _, times, label, process in rows] == [
        ("client sends", "client", 1), ("gateway hears", "gateway", 1), ("gateway asks", "gateway", 2)]
    first, last = rows[2][0], rows[2][1]
    assert first == pytest.approx(0.7) and last == pytest.approx(0.9)
