"""The `all`-mode reply text (P-13), the `bench` object (P-14, A-2, A-3, A-4) and seat task texts (C-13)."""

from __future__ import annotations

import re

from services.gateway.panel.text import (
    EMPTY_BODY,
    FOOTER,
    VERDICT_HINT,
    bench_object,
    full_text,
    head,
    seat_task,
    section,
)
from shared.events import Skip
from tests.unit.factories import PANEL, done, plan

SKIP = Skip(seat="member", alias="old", why="retired from the bench on 2026-01-01; take it out")


def test_heading_names_collection_panel_counts_and_shape() -> None:
    p = plan(members=2, explorers=1)
    assert head(p) == (
        f"Bench bench/core {PANEL} · 2 members + 1 explorers · explorer shape general "
        "(set on the collection)\n"
    )


def test_not_asked_line_follows_the_heading() -> None:
    skip2 = Skip(seat="with", alias="eye", why="cannot see")
    text = head(plan(skipped=[SKIP, skip2]))
    lines = text.split("\n")
    assert lines[0].startswith("Bench bench/core")
    assert lines[1] == ""
    assert lines[2] == f"Not asked: old ({SKIP.why}); eye (cannot see)"


def test_sections_in_seat_order_with_failed_and_empty_seats_shown() -> None:
    p = plan(members=2, explorers=2)
    m1, m2, x1, x2 = p.seats
    results = {
        x2.call: done(x2, answer="explorer two says hi", seconds=0.34),
        m2.call: done(m2, status="error", error="HTTP 500: " + "x" * 400, seconds=2.0),
        x1.call: done(x1, status="empty", seconds=9.96),
        m1.call: done(m1, answer="member one says hi"),
    }
    text = full_text(p, results)
    order = [text.index(f"`{s.call}`") for s in p.seats]
    assert order == sorted(order)  # seat order, not finish order
    assert f"## member — m1\n`{m1.call}` · ok · 1.2s\n\nmember one says hi\n" in text
    assert f"## member — m2\n`{m2.call}` · error · 2.0s\n\n_error: HTTP 500: {'x' * 290}_\n" in text
    assert f"## explorer — x1\n`{x1.call}` · empty · 10.0s\n\n{EMPTY_BODY}\n" in text
    assert f"## explorer 2 — x2\n`{x2.call}` · ok · 0.3s\n\nexplorer two says hi\n" in text
    assert text.startswith(head(p) + "\n## member — m1")
    assert text.endswith("\n" + FOOTER)
    assert "/bench/verdict" in FOOTER and "bench verdict" in FOOTER


def test_pieces_joined_equal_the_whole_text() -> None:
    p = plan(members=1, explorers=1, skipped=[SKIP])
    results = {s.call: done(s) for s in p.seats}
    pieces = head(p) + "".join("\n" + section(s, results[s.call]) for s in p.seats) + "\n" + FOOTER
    assert pieces == full_text(p, results)


def test_bench_object_has_exactly_the_p14_fields() -> None:
    p = plan(members=2, explorers=1)
    results = {s.call: done(s) for s in p.seats}
    bench = bench_object(p, results)
    assert set(bench) == {"panel", "collection", "shape", "shape_by", "seats", "verdict"}
    assert bench["panel"] == PANEL and re.fullmatch(r"p\d{8}-\d{6}-[0-9a-f]{4}", bench["panel"])
    assert bench["collection"] == "bench/core"
    assert bench["verdict"] == VERDICT_HINT
    assert [s["call"] for s in bench["seats"]] == [
        f"{PANEL}.member1",
        f"{PANEL}.member2",
        f"{PANEL}.explorer",
    ]
    for seat in bench["seats"]:
        assert set(seat) == {"call", "seat", "alias", "status", "seconds", "answer", "error"}
    assert bench["seats"][0] == {
        "call": f"{PANEL}.member1",
        "seat": "member",
        "alias": "m1",
        "status": "ok",
        "seconds": 1.2,
        "answer": "m1 answers",
        "error": "",
    }


def test_skipped_appears_only_when_someone_was_skipped() -> None:
    p = plan(members=1, explorers=0, skipped=[SKIP])
    bench = bench_object(p, {s.call: done(s) for s in p.seats})
    assert bench["skipped"] == [{"seat": "member", "alias": "old", "why": SKIP.why}]


def test_seat_task_is_90_collapsed_chars_and_the_collection() -> None:
    prompt = "  Review   this\n\tdiff " + "word " * 40
    task = seat_task(prompt, "core", "review")
    words = " ".join(prompt.split())[:90]
    assert task == f"{words} (bench/core, review)"
    assert len(words) == 90
