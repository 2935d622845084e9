"""Merged mode without I/O (P-15, P-14, S-4): who merges, what it reads, the reply either way."""

from __future__ import annotations

from typing import Any

from services.gateway.formats import OPENAI_CHAT
from services.gateway.panel.flatten import estimate_tokens
from services.gateway.panel.merge import (
    INSTRUCTION,
    Merge,
    choose_merger,
    merge_fields,
    merged,
    merged_text,
    merger_input,
)
from services.gateway.panel.present import MergedMode
from services.gateway.panel.progress import Finished, Landed, Seated
from services.gateway.panel.text import full_text
from shared.commands import MergerCandidate, Plan
from shared.events import SeatCompleted
from tests.unit.factories import PANEL, done, plan

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "QUJD" * 300}}


def candidate(alias: str, window: int | None = None) -> MergerCandidate:
    return MergerCandidate(
        alias=alias, served=f"org/{alias}", endpoint="fake", connection="fake", context_window=window
    )


def ask_of(messages: list[dict[str, Any]]) -> Any:
    return OPENAI_CHAT.parse({"model": "bench/core:merged", "messages": messages}, {})


ASK = ask_of(
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Why is the sky blue?"}]
)


def results(statuses: list[str], p: Plan | None = None) -> dict[str, SeatCompleted]:
    p = p or plan(members=len(statuses), explorers=0)
    return {
        seat.call: done(seat, status, error="HTTP 500" if status == "error" else "")  # type: ignore[arg-type]
        for seat, status in zip(p.seats, statuses, strict=True)
    }


def test_the_merger_reads_the_request_then_each_ok_answer_by_label_and_alias() -> None:
    p = plan(members=3, explorers=0)
    text = merger_input(ASK, p, results(["ok", "error", "ok"]))
    assert text == (
        "THE REQUEST\n\nBe brief.\n\nWhy is the sky blue?\n\nTHE ANSWERS\n\n"
        "## member — m1\n\nm1 answers\n\n## member — m3\n\nm3 answers"
    )


def test_the_merger_sees_placeholders_never_images() -> None:
    ask = ask_of([{"role": "user", "content": [{"type": "text", "text": "What is it?"}, IMAGE]}])
    text = merger_input(ask, plan(members=1, explorers=0), results(["ok"]))
    assert "[image: data URL, 1 KB]" in text and "QUJD" not in text


def test_the_first_candidate_whose_window_holds_the_merge_merges() -> None:
    statuses = ["ok", "ok"]
    need = estimate_tokens(INSTRUCTION, merger_input(ASK, plan(members=2, explorers=0), results(statuses)))
    p = plan(
        members=2,
        explorers=0,
        mergers=[candidate("small", need - 1), candidate("fits", need), candidate("later")],
    )
    chosen = choose_merger(ASK, p, results(statuses))
    assert not isinstance(chosen, Merge)
    seat, text = chosen
    assert (seat.call, seat.seat, seat.alias) == (f"{PANEL}.merger", "merger", "fits")
    assert text.startswith("THE REQUEST")
    unknown = plan(members=2, explorers=0, mergers=[candidate("unknown"), candidate("fits", need)])
    chosen = choose_merger(ASK, unknown, results(statuses))
    assert not isinstance(chosen, Merge) and chosen[0].alias == "unknown"  # unknown windows never refuse


def test_no_merge_call_when_no_seat_answered_or_no_window_holds_it() -> None:
    p = plan(members=2, explorers=0, mergers=[candidate("tiny", 10)])
    assert choose_merger(ASK, p, results(["error", "empty"])) == Merge(note="no seat answered")
    too_small = choose_merger(ASK, p, results(["ok", "ok"]))
    assert isinstance(too_small, Merge) and too_small.seat is None
    assert too_small.note.startswith("no merger has the context window for the merge (about ")
    assert too_small.note.endswith(" tokens)")
    assert choose_merger(ASK, plan(members=1, explorers=0), results(["ok"])) == Merge(
        note="no merger has the context window for the merge (about "
        f"{estimate_tokens(INSTRUCTION, merger_input(ASK, plan(members=1, explorers=0), results(['ok']))):,} "
        "tokens)"
    )


def test_a_merged_reply_starts_with_the_mergers_answer_and_names_who_answered() -> None:
    p = plan(members=2, explorers=1, mergers=[candidate("boss")])
    got = results(["ok", "error", "ok"], p)
    seat = choose_merger(ASK, p, got)
    assert not isinstance(seat, Merge)
    merge = merged(seat[0], done(seat[0], answer="One answer."))
    assert merge.merged and merge.note == ""
    text = merged_text(p, got, merge)
    assert text == (
        "One answer.\n\n---\nMerged by boss (`" + PANEL + ".merger`) from: m1 ok, m2 error, x1 ok. "
        "Each seat's own answer is in `bench.seats`; judge each seat and the merger with "
        "`POST /bench/verdict` (see `bench.verdict`)."
    )
    fields = merge_fields(merge)
    assert fields["reply"] == "merged" and "note" not in fields
    assert fields["merger"] == {
        "call": f"{PANEL}.merger",
        "seat": "merger",
        "alias": "boss",
        "status": "ok",
        "seconds": 1.2,
        "answer": "One answer.",
        "error": "",
    }


def test_a_merger_that_fails_leaves_every_answer_after_a_note() -> None:
    p = plan(members=2, explorers=0, mergers=[candidate("boss")])
    got = results(["ok", "ok"])
    chosen = choose_merger(ASK, p, got)
    assert not isinstance(chosen, Merge)
    merge = merged(chosen[0], done(chosen[0], "error", error="HTTP 500: upstream down"))
    assert not merge.merged
    assert merge.note == "the merger boss came back error: HTTP 500: upstream down"
    text = merged_text(p, got, merge)
    assert text == (
        "_Merged reply unavailable: the merger boss came back error: HTTP 500: upstream down. "
        "Every answer follows._\n\n" + full_text(p, got)
    )
    fields = merge_fields(merge)
    assert (fields["reply"], fields["note"], fields["merger"]["status"]) == ("all", merge.note, "error")
    empty = merged(chosen[0], done(chosen[0], "empty"))
    assert empty.note == "the merger boss came back empty"
    assert merge_fields(Merge(note="no seat answered")) == {"reply": "all", "note": "no seat answered"}


def test_merged_mode_streams_nothing_per_seat_and_everything_at_the_end() -> None:
    p = plan(members=2, explorers=0)
    got = results(["ok", "ok"])
    mode = MergedMode()
    assert mode.seated(Seated(p)) == ""
    assert mode.landed(Landed(p.seats[0], got[p.seats[0].call])) == ""
    finished = Finished(p, got, Merge(note="no seat answered"))
    last, bench = mode.finished(finished)
    answer = mode.answer(finished)
    assert last == answer.content and bench == answer.bench
    assert last.startswith("_Merged reply unavailable: no seat answered. Every answer follows._")
    assert (bench["reply"], bench["note"]) == ("all", "no seat answered")
    assert [s["call"] for s in bench["seats"]] == [s.call for s in p.seats]
