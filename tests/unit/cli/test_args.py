"""Global options may come before or after the command (SPEC CLI-2)."""

from __future__ import annotations

from cli.args import hoist_globals


def test_globals_after_the_command_move_to_the_front() -> None:
    args = ["endpoint", "add", "x", "--base", "http://b", "--url", "http://u", "--json"]
    assert hoist_globals(args) == ["--url", "http://u", "--json", "endpoint", "add", "x", "--base", "http://b"]


def test_equals_form_and_order_are_kept() -> None:
    assert hoist_globals(["status", "--json", "--url=http://u"]) == ["--json", "--url=http://u", "status"]


def test_nothing_moves_after_a_double_dash() -> None:
    assert hoist_globals(["x", "--", "--json"]) == ["x", "--", "--json"]


def test_a_url_without_a_value_stays_for_click_to_refuse() -> None:
    assert hoist_globals(["status", "--url"]) == ["status", "--url"]


def test_other_options_are_untouched() -> None:
    args = ["model", "add", "m", "--endpoint", "e", "--no-tools"]
    assert hoist_globals(args) == args
