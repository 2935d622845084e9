"""T-2 and T-3's scoring rules, one named test each."""

from __future__ import annotations

from typing import Any

import pytest

from suite.scoring import (
    FALSE_ALARM,
    NO_FAULT,
    fault_at,
    fault_elsewhere,
    score,
    verdict,
    wrong_kind,
)
from suite.task import Task

LONG = " The reasoning is given in full below, with enough words to count as an answer."


def task(**fields: Any) -> Task:
    base: dict[str, Any] = {"id": "t", "title": "t", "prompt": "review this", "must_find": ["race"]}
    return Task.model_validate({**base, **fields})


def test_a_timeout_is_no_answer() -> None:
    got = score(task(), "", status="error", error="no answer in 420s")
    assert (got.kind, got.of, got.answered) == ("timeout", 0, False)


def test_an_error_seat_is_no_answer() -> None:
    assert score(task(), "", status="error", error="HTTP 500").kind == "error"


@pytest.mark.parametrize("text", [
    "Error: Error code: 429 - too many requests",
    "Error: client failed: rate limit (not sent; paced by the bench): try again in 30s",
    "You have run out of credits, upgrade your plan to keep using this model today.",
])
def test_error_markers_and_provider_notices_are_no_answer(text: str) -> None:
    assert score(task(), text).kind == "error"


def test_a_refusal_is_no_answer() -> None:
    assert score(task(), "I'm sorry, but I can't help with reviewing this code." + LONG).kind == "refused"


def test_too_short_is_no_answer_and_the_minimum_is_the_tasks() -> None:
    assert score(task(), "race").kind == "error"
    assert score(task(min_answer_chars=4), "race").kind == "answered"


def test_a_long_review_that_discusses_rate_limits_is_still_an_answer() -> None:
    text = "The pacer has a race between read and write." + LONG + "\nIt mentions a rate limit later." * 20
    got = score(task(), text)
    assert (got.kind, got.found) == ("answered", ("race",))


def test_found_is_case_insensitive_and_any_of_and_regex_count_once() -> None:
    regex = {"regex": r"line\s+4\b", "label": "l4"}
    t = task(must_find=["RACE", {"any_of": ["deadlock", "lock order"]}, regex])
    got = score(t, "A race on line 4: the lock order is inverted." + LONG)
    assert got.found == ("RACE", "deadlock | lock order", "l4") and got.of == 3


def test_a_missed_clause_lowers_recall() -> None:
    got = score(task(must_find=["race", "leak"]), "There is a race." + LONG)
    assert (got.found, got.missed) == (("race",), ("leak",))


def test_invented_needs_an_assertion_not_a_negated_mention() -> None:
    t = task(must_not_claim=["sql injection"])
    assert score(t, "There is no SQL injection here; the race is real." + LONG).invented == ()
    assert score(t, "The race is real. SQL injection in the query too." + LONG).invented == ("sql injection",)


def test_the_negation_window_is_sixty_characters() -> None:
    t = task(must_not_claim=["sql injection"])
    near = "Not " + "a" * 50 + " sql injection." + LONG
    far = "Not " + "a" * 70 + " sql injection." + LONG
    assert score(t, near).invented == () and score(t, far).invented == ("sql injection",)


def test_first_line_scores_only_the_first_non_empty_line() -> None:
    t = task(score_in="first_line", must_find=[fault_at(3)])
    assert score(t, "\n\nFAULT: line 3\nbecause" + LONG).found == ("FAULT: line 3",)
    assert score(t, "NO FAULT\nthough FAULT: line 3 would be my guess" + LONG).found == ()


def test_table_confines_invention_to_table_rows() -> None:
    t = task(must_not_claim=["leak"], must_not_claim_in="table")
    prose = "A leak would be bad, but here:\n| issue | where |\n|---|---|\n| race | pacer |" + LONG
    row = "Findings:\n| issue | where |\n|---|---|\n| leak | pacer |" + LONG
    assert score(t, prose).invented == () and score(t, row).invented == ("leak",)


def test_format_is_checked_apart_from_the_score() -> None:
    t = task(format={"table": True, "min_rows": 2, "must_not_contain": ["TODO"]})
    got = score(t, "The race, TODO: table." + LONG)
    assert got.found == ("race",)
    assert got.format_problems == ("no table", "fewer than 2 table rows", "contains 'TODO'")


def test_claim_tasks_verdict_on_the_first_line() -> None:
    false_claim = task(shape="claim", score_in="first_line", must_find=[verdict(False)],
                       must_not_claim=[verdict(True)])
    right = score(false_claim, "VERDICT: FALSE\nThe function returns early." + LONG)
    wrong = score(false_claim, "**VERDICT: TRUE**\nIt does." + LONG)
    assert (right.found, right.confidently_wrong) == (("VERDICT: FALSE",), False)
    assert (wrong.invented, wrong.confidently_wrong) == (("VERDICT: TRUE",), True)
    assert wrong_kind(false_claim) == "wrong verdict"


def test_a_seeded_bug_found_on_its_line_and_a_wrong_line() -> None:
    bug = task(shape="seeded", score_in="first_line", must_find=[fault_at(7)],
               must_not_claim=[fault_elsewhere(7)])
    assert score(bug, "FAULT: line 7\n`<` became `<=`." + LONG).found == ("FAULT: line 7",)
    assert score(bug, "FAULT: line 17\nthe loop." + LONG).invented == ("a line other than 7",)
    missed = score(bug, "NO FAULT\nLooks fine to me." + LONG)
    assert (missed.found, missed.confidently_wrong) == ((), False)
    assert wrong_kind(bug) == "wrong line"


def test_the_controls_false_alarm() -> None:
    control = task(id="c", shape="seeded", score_in="first_line", must_find=[NO_FAULT],
                   must_not_claim=[FALSE_ALARM], control_of="t")
    clean = score(control, "NO FAULT\nThe comparison is right." + LONG)
    alarm = score(control, "FAULT: line 3\nThe comparison is off by one." + LONG)
    assert (clean.found, clean.invented) == (("NO FAULT",), ())
    assert (alarm.invented, alarm.confidently_wrong) == (("a fault in the control",), True)
    assert wrong_kind(control) == "false alarm"


def test_a_trap_is_any_other_task_with_an_invention() -> None:
    t = task(must_not_claim=["deadlock"])
    assert score(t, "A race and a deadlock." + LONG).confidently_wrong and wrong_kind(t) == "trap"
