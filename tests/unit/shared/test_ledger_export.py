"""An export folder's manifest (marks only move forward, exports listed) and the tar framing the admin API
streams an export in, read back by `tarfile`."""

from __future__ import annotations

import io
import tarfile
from datetime import UTC, datetime
from pathlib import Path

from shared.commands import ExportedFile, ExportReply
from shared.ledger_export import (
    TAR_END,
    Manifest,
    read_manifest,
    recorded,
    tar_header,
    tar_padding,
)

AT = datetime(2026, 12, 3, 10, tzinfo=UTC)


def reply(name: str, **marks: int) -> ExportReply:
    return ExportReply(export=name, at=AT, marks=marks, rows={"seats": 1},
                       files=[ExportedFile(path="seats/day=2026-12-03/part-x-0.parquet", bytes=3)])


def test_marks_move_forward_and_every_export_is_listed(tmp_path: Path) -> None:
    assert read_manifest(tmp_path) == Manifest()
    first = recorded(Manifest(), reply("x1", seats=10, panels=4))
    second = recorded(first, reply("x2", seats=12, panels=2))
    assert second.marks == {"seats": 12, "panels": 4}
    assert [e.export for e in second.exports] == ["x1", "x2"]
    (tmp_path / "manifest.json").write_text(second.model_dump_json())
    assert read_manifest(tmp_path) == second


def test_the_streamed_framing_is_a_tar() -> None:
    files = {"export.json": b'{"a": 1}', "seats/day=2026-12-03/part-x-0.parquet": b"x" * 1000}
    stream = b"".join(tar_header(name, len(data), AT.timestamp()) + data + tar_padding(len(data))
                      for name, data in files.items()) + TAR_END
    with tarfile.open(fileobj=io.BytesIO(stream)) as tar:
        assert {m.name: tar.extractfile(m).read() for m in tar.getmembers()} == files  # type: ignore[union-attr]
