"""`bench suite …`: run and results go to their routes; seed refuses what is not a git work tree."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from tests.unit.cli.conftest import FakeServer

Bench = Callable[..., Result]


def test_suite_run_asks_for_one_pass_and_shows_its_scores(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/suite/run", body={
        "ok": True, "run": "s20261203-100000-abcd", "alias": "gpt-mini",
        "refused": ["bad: attach: is absolute"], "skipped": [], "results": [
            {"task": "seed-x", "kind": "answered", "found": ["FAULT: line 3"], "missed": [], "invented": [],
             "wrong": "", "reason": "", "seconds": 2.0},
            {"task": "seed-x-control", "kind": "answered", "found": [], "missed": ["NO FAULT"],
             "invented": ["a fault in the control"], "wrong": "false alarm", "reason": "", "seconds": 1.0}]})
    result = bench("suite", "run", "--model", "gpt-mini", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert server.body() == {"model": "gpt-mini", "task": "", "next": ""}
    assert "seed-x-control" in result.stdout and "false alarm" in result.stdout
    assert "refused: bad: attach: is absolute" in result.stderr
    assert "2 asked, 2 answered, 1 confidently wrong" in result.stderr


def test_suite_run_needs_one_way_to_pick_the_model(bench: Bench, server: FakeServer) -> None:
    assert bench("suite", "run").exit_code == 2
    assert bench("suite", "run", "--model", "a", "--next").exit_code == 2
    assert server.seen == []


def test_suite_results_for_one_model_with_the_confidently_wrong(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/suite/results", body={
        "ok": True, "shapes": [], "models": [
            {"alias": "m", "answered": 3, "found": 2, "of": 4, "recall": 0.5, "confidently_wrong": 1,
             "last": "2026-12-03T10:00:00Z"}],
        "wrong": [{"alias": "m", "task": "claim-1", "wrong": "wrong verdict", "invented": ["VERDICT: TRUE"],
                   "call": "s1.t1", "at": "2026-12-03T10:00:00Z"}]})
    result = bench("suite", "results", "--model", "m", "--wrong", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert str(server.seen[0].url).endswith("/api/suite/results?alias=m")
    assert "0.5" in result.stdout and "wrong verdict" in result.stdout


def test_seed_refuses_a_folder_that_is_not_a_work_tree_and_writes_nothing(
    bench: Bench, tmp_path: Path
) -> None:
    out = tmp_path / "tasks"
    result = bench("suite", "seed", "--repo", str(tmp_path), "--out", str(out))
    assert result.exit_code == 1 and "is not a git work tree" in result.stderr
    assert not out.exists()


def test_collection_rank_shows_why_each_member_is_where_it_is(bench: Bench, server: FakeServer) -> None:
    server.answer("GET", "/api/collection/rank", body={
        "ok": True, "collection": "agents", "mergers": ["m-c", "m-a"], "primary": "m-c", "route": [
            {"alias": "m-b", "place": 1, "useful": 1, "judged": 1, "findings": 0, "recall": None,
             "suite_answers": 0, "confidently_wrong": 0, "resting": False,
             "why": "1 useful of 1 judged; no suite score"}]})
    result = bench("collection", "rank", "agents", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert str(server.seen[0].url).endswith("/api/collection/rank?name=agents")
    assert "1 useful of 1 judged; no suite score" in result.stdout
    assert "mergers: m-c, m-a; router's primary: m-c" in result.stderr


def test_mine_writes_a_draft_per_judged_claim(bench: Bench, server: FakeServer, tmp_path: Path) -> None:
    server.answer("GET", "/api/suite/claims", body={"ok": True, "rows": [
        {"call": "p20261203-101010-abcd.member1", "alias": "m", "real": ["holds the lock"], "false": [],
         "prompt": "Check:\n\n`lib.py`:\n```\ndef f():\n    pass\n```"}]})
    out = tmp_path / "tasks"
    result = bench("suite", "mine", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == ["mined-p20261203-101010-abcd-member1-1"]
    assert (out / "mined-p20261203-101010-abcd-member1-1" / "fixtures" / "lib.py").read_text() == (
        "def f():\n    pass\n")


def test_rescore_lists_the_scores_that_changed(bench: Bench, server: FakeServer) -> None:
    server.answer("POST", "/api/suite/rescore", body={"ok": True, "changed": [
        {"alias": "m", "task": "claim-1", "call": "s1.t1", "before": "answered 1/1",
         "after": "answered 0/1, invented VERDICT: TRUE"}]})
    result = bench("suite", "rescore", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "answered 0/1, invented VERDICT: TRUE" in result.stdout and "1 scores changed" in result.stderr
