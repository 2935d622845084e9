"""What a Stop hook may read of a transcript (MCP-3): `.jsonl` files only, the last 8 MiB, call ids only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared import transcripts
from shared.transcripts import call_ids, readable, transcript_calls

ONE, TWO = "p20260101-120000-ab12.member1", "p20260101-120000-ab12.explorer2"


def test_call_ids_are_found_once_in_order_even_inside_escaped_json() -> None:
    inner = json.dumps({"text": f"## member\n`{ONE}` · ok\n{TWO}"})
    text = json.dumps({"content": inner}) + f" again {ONE} and p20260101-120000-ab12 (a panel, no seat)"
    assert call_ids(text) == [ONE, TWO]


def test_only_jsonl_files_are_read(tmp_path: Path) -> None:
    good = tmp_path / "t.jsonl"
    good.write_text(json.dumps({"c": ONE}) + "\n")
    other = tmp_path / "notes.txt"
    other.write_text(ONE)
    link = tmp_path / "link.jsonl"
    link.symlink_to(other)
    folder = tmp_path / "dir.jsonl"
    folder.mkdir()
    assert readable(str(good)) == good.resolve() and transcript_calls(str(good)) == [ONE]
    for path in (str(other), str(link), str(folder), str(tmp_path / "missing.jsonl"), "", "a\x00.jsonl"):
        assert readable(path) is None and transcript_calls(path) == []


def test_only_the_tail_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transcripts, "TAIL_BYTES", 64)
    path = tmp_path / "long.jsonl"
    path.write_text(ONE + "\n" + "x" * 100 + "\n" + TWO + "\n")
    assert transcript_calls(str(path)) == [TWO]
