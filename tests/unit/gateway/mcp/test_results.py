"""The MCP tools' arguments and results without I/O (MCP-2, MCP-3, MCP-4, A-74): argument checks, the
canonical ask, the seats JSON, the progress lines, the verdict line and the collection list."""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.gateway.listing import model_rows
from services.gateway.mcp.results import (
    ERROR_TAIL,
    AskArgs,
    ask_args,
    ask_of,
    ask_outcome,
    collections_text,
    landed_message,
    refused,
    seated_message,
    seats_summary,
    tick_progress,
    verdict_text,
    waiting_message,
)
from services.gateway.panel.text import bench_object
from shared.refusal import Refusal
from tests.unit import factories as f


def test_ask_arguments_are_checked_and_defaulted() -> None:
    asked = ask_args({"collection": " bench/core ", "prompt": "why?"})
    assert asked == AskArgs(collection="bench/core", prompt="why?")
    full = ask_args({"collection": "core", "prompt": "p", "system": "s", "merged": False, "with": ["m9"]})
    assert (full.system, full.merged, full.with_) == ("s", False, ["m9"])


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ({"prompt": "p"}, '"collection"'),
        ({"collection": "core"}, '"prompt"'),
        ({"collection": "core", "prompt": "  "}, '"prompt"'),
        ({"collection": 3, "prompt": "p"}, '"collection"'),
        ({"collection": "core", "prompt": "p", "system": ["x"]}, '"system"'),
        ({"collection": "core", "prompt": "p", "merged": "yes"}, '"merged"'),
        ({"collection": "core", "prompt": "p", "with": "m9"}, '"with"'),
        ({"collection": "core", "prompt": "p", "with": [1]}, '"with"'),
    ],
)
def test_bad_ask_arguments_are_400_refusals_naming_the_argument(args: dict[str, Any], named: str) -> None:
    with pytest.raises(Refusal) as refusal:
        ask_args(args)
    assert refusal.value.status == 400 and named in refusal.value.message


def test_the_ask_sets_the_reply_only_when_merged_is_given() -> None:
    base = AskArgs(collection="core", prompt="why?", system="be brief")
    ask = ask_of(base, "team-key")
    assert (ask.model, ask.reply, ask.caller) == ("core", None, "team-key")
    assert (ask.system, ask.prompt) == ("be brief", "why?")
    assert ask.messages[0] == {"role": "system", "content": "be brief"}
    assert ask_of(AskArgs("core", "p", merged=True), "local").reply == "merged"
    assert ask_of(AskArgs("core", "p", merged=False), "local").reply == "all"
    assert [m["role"] for m in ask_of(AskArgs("core", "p"), "local").messages] == ["user"]


def bench(**extra: Any) -> dict[str, Any]:
    plan = f.plan(members=2, explorers=1)
    results = {seat.call: f.done(seat) for seat in plan.seats}
    last = plan.seats[-1]
    results[last.call] = f.done(last, status="error", error="x" * 400 + "the end")
    return {**bench_object(plan, results), **extra}


def test_the_seats_json_leaves_answers_out_unless_merged_and_keeps_an_errors_tail() -> None:
    summary = seats_summary(bench(), merged=False)
    assert set(summary) == {"panel", "collection", "shape", "seats"}
    assert all("answer" not in seat for seat in summary["seats"])
    error = summary["seats"][-1]["error"]
    assert error.endswith("the end") and len(error) == ERROR_TAIL
    merged = seats_summary(bench(merger={"call": "c.merger", "answer": "merged"}, note="n"), merged=True)
    assert all("answer" in seat for seat in merged["seats"])
    assert merged["merger"]["answer"] == "merged" and merged["note"] == "n"


def test_an_ask_result_is_the_reply_then_the_seats() -> None:
    outcome = ask_outcome("the reply", bench(), merged=False)
    assert not outcome.is_error and outcome.texts[0] == "the reply"
    heading, _, raw = outcome.texts[1].partition("\n")
    assert heading.startswith("Seats (") and json.loads(raw)["panel"] == f.PANEL


def test_progress_says_which_seats_were_asked_and_which_have_answered() -> None:
    plan = f.plan(members=2, explorers=1)
    asked = seated_message(plan.seats, plan.panel)
    assert plan.panel in asked and "3 seat(s): member1 (m1), member2 (m2), explorer (x1);" in asked
    first, second = plan.seats[1], plan.seats[0]
    landed = [(first, f.done(first, seconds=0.5)), (second, f.done(second, status="error", seconds=2.0))]
    said = landed_message(landed, 3)
    assert said == "2 of 3 seats answered: member2 (m2, ok 0.5s), member1 (m1, error 2.0s)"


def test_between_landings_it_says_who_is_awaited_and_progress_still_rises() -> None:
    plan = f.plan(members=2, explorers=1)
    said = waiting_message(plan.seats[1:], 3, 20.4)
    assert said == "1 of 3 seats answered after 20s; still waiting for member2 (m2), explorer (x1)"
    values = [0.0, tick_progress(0, 1), tick_progress(0, 2), 1.0, tick_progress(1, 1), tick_progress(1, 30)]
    values.append(2.0)
    assert values == sorted(values) and len(set(values)) == len(values)


def test_refusals_and_verdicts_in_the_tools_words() -> None:
    said = refused("ask", 403, "the key k may not call bench/x")
    assert said.is_error and said.texts == ["Benchwarmers refused ask (403): the key k may not call bench/x"]
    assert verdict_text("c.member1", True, ["a", "b"], None) == "Recorded c.member1: useful, 2 real, 0 false."
    assert verdict_text("c.member1", False, None, ["z"]) == "Recorded c.member1: not useful, 0 real, 1 false."


def test_collections_are_listed_once_each_or_how_to_make_one() -> None:
    state = f.config(f.endpoint(), f.model("m1", context_window=8000), f.model("m2", context_window=4000),
                     f.collection("core", ["m1", "m2"], description="daily", tags=["general"]))
    rows = json.loads(collections_text(model_rows(state)))
    assert [row["name"] for row in rows] == ["bench/core"]
    row = rows[0]
    assert (row["description"], row["tags"], row["members"], row["reply"]) == ("daily", ["general"],
                                                                               ["m1", "m2"], "all")
    assert row["context_window"] == 4000 and "capabilities" in row and "limits" in row
    assert "no collections yet" in collections_text([])
