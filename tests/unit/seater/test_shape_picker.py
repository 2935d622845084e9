"""The shape picker (SPEC P-4, C-9): when it is asked, what it is asked, what its answer means, and the
shape's effect on who may explore. Pure: the answers are `SeatCompleted`s as a caller would publish them."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from services.seater.planning import Draft, plan_panel
from services.seater.rotation import Rotation
from services.seater.shape_picker import (
    CHOICES,
    MIN_CONFIDENCE,
    due,
    pick_call,
    question,
    read_answer,
)
from services.seater.shapes import Picked
from shared.commands import PICK_TEXT_LIMIT, picker_text
from shared.events import SeatCompleted
from tests.unit.seater.factory import T0, ask, bench, collection, model

POOL = [model("m1"), model("g1"), model("c1", role="code"), model("judge", role="decision")]


def answered(text: str, status: str = "ok", error: str = "") -> SeatCompleted:
    return SeatCompleted(id="seat:d1.shape", call="d1.shape", panel="d1", seat="shape", alias="judge",
                         served="org/judge", endpoint="ep", connection="ep", purpose="decision",
                         status=status, error=error, answer=text, seconds=0.4)


def test_the_picker_is_the_first_decision_model_not_ad_hoc() -> None:
    config = bench([model("m1"), model("lazy", role="decision", ad_hoc=True), model("judge", role="decision"),
                    model("late", role="decision")])
    assert config.decision_model() is not None and config.decision_model().alias == "judge"  # type: ignore[union-attr]
    assert bench([model("m1")]).decision_model() is None


def test_the_picker_is_asked_only_where_p4_reaches_it() -> None:
    config = bench(POOL, collection("core", ["m1"]), collection("coded", ["m1"], shape="code"))
    text = {"text": "fix my loop"}
    assert due(ask(**text), config) is not None
    assert due(ask(), config) is None  # the asker knew no picker, so it waits no longer than for any plan
    assert due(ask("coded", **text), config) is None  # the collection's own shape
    assert due(ask(has_images=True, **text), config) is None  # images: vision
    assert due(ask("nope", **text), config) is None  # the planner refuses it anyway
    no_explorers = bench(POOL, collection("core", ["m1"]), max_explorers=0)
    assert due(ask(**text), no_explorers) is None  # no explorer seats
    assert due(ask(**text), bench(POOL[:3], collection("core", ["m1"]))) is None  # no decision model


def test_the_question_lists_every_choice_and_carries_the_text_cut_short() -> None:
    text = picker_text("Be brief.", "x" * (PICK_TEXT_LIMIT * 2))
    assert text.startswith("Be brief.\n\nxxx") and len(text) == PICK_TEXT_LIMIT
    [msg] = question(text)
    assert isinstance(msg.content, str)
    for name, about in CHOICES.items():
        assert f"- {name}: {about}" in msg.content
    assert msg.content.endswith(text)


def test_the_question_is_a_decision_call_for_the_callers() -> None:
    config = bench(POOL, collection("core", ["m1"]))
    call = pick_call("d1.shape", config.models["judge"], config, "fix my loop", T0)
    assert (call.purpose, call.alias, call.panel, call.seat) == ("decision", "judge", "d1", "shape")
    assert (call.retries, call.deadline) == (0, T0.timestamp() + call.timeout_s)
    assert call.base == "http://ep.test/v1" and "fix my loop" in str(call.messages[0].content)


def test_an_answer_names_the_shape() -> None:
    said = 'Sure. {"choice": "code", "confidence": 0.97}'
    assert read_answer("judge", answered(said), 0.4) == Picked("code", "judge, 0.97")


def test_an_unsure_or_unknown_choice_falls_back_to_general() -> None:
    low = json.dumps({"choice": "code", "confidence": MIN_CONFIDENCE - 0.01})
    assert read_answer("judge", answered(low), 0.4) == Picked("general", "judge unsure (code at 0.59)")
    odd = json.dumps({"choice": "poetry", "confidence": 0.9})
    assert read_answer("judge", answered(odd), 0.4) == Picked("general", "judge unsure (poetry at 0.9)")


def test_silence_errors_and_nonsense_fall_back_to_general() -> None:
    assert read_answer("judge", None, 15.0) == Picked("general", "judge failed (no answer in 15s)")
    failed = answered("", status="error", error="HTTP 500: boom")
    assert read_answer("judge", failed, 0.4) == Picked("general", "judge failed (HTTP 500: boom)")
    nonsense = read_answer("judge", answered("I like turtles"), 0.4)
    assert nonsense == Picked("general", "judge failed (no choice in its answer: 'I like turtles')")
    for bad in ('{"choice": "code"}', '{"choice": "code", "confidence": "high"}',
                '{"choice": "code", "confidence": 7}', '{"choice": "code", "confidence": true}', "{oops}"):
        assert read_answer("judge", answered(bad), 0.4).shape == "general"


@given(st.text(max_size=200))
def test_any_answer_gives_a_shape_a_collection_may_have(text: str) -> None:
    picked = read_answer("judge", answered(text), 0.4)
    assert picked.shape in CHOICES and picked.by.startswith("judge")


def test_the_picked_shape_decides_who_may_explore() -> None:
    """`code` admits general and code models as explorers (C-7); the fallback `general` only general ones."""
    config = bench(POOL, collection("core", ["m1"]))

    def explorers(picked: Picked | None) -> tuple[str, str, list[str]]:
        draft = plan_panel(ask(), config, Rotation(), T0, picked)
        assert isinstance(draft, Draft)
        return draft.shape, draft.shape_by, sorted(m.alias for m in draft.explorers)

    assert explorers(Picked("code", "judge, 0.97")) == ("code", "judge, 0.97", ["c1", "g1"])
    assert explorers(Picked("general", "judge failed (no answer in 15s)")) == (
        "general", "judge failed (no answer in 15s)", ["g1"])
    assert explorers(None) == ("general", "no decision model onboarded", ["g1"])
