"""`bench ledger export`: marks from the folder's manifest go out as `after`, the streamed tar is unpacked
into the folder and recorded; an archive naming a path outside a table's day folder is refused."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs

import httpx
from typer.testing import Result

from shared.commands import ExportedFile, ExportReply
from shared.ledger_export import read_manifest

Bench = Callable[..., Result]
FILE = "seats/day=2026-12-03/part-x20261203-101010-abcd-0.parquet"


def archive(reply: ExportReply, files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in {"export.json": reply.model_dump_json().encode(), **files}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def serving(body: bytes, seen: list[httpx.Request]) -> Callable[[httpx.Request], httpx.Response]:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=body, headers={"content-type": "application/x-tar"})
    return handle


def reply(name: str, seats: int) -> ExportReply:
    return ExportReply(export=name, at=datetime(2026, 12, 3, tzinfo=UTC), marks={"seats": seats},
                       rows={"seats": 1}, files=[ExportedFile(path=FILE, bytes=4)])


def test_export_unpacks_and_records_then_asks_after_the_marks(bench: Bench, tmp_path: Path) -> None:
    seen: list[httpx.Request] = []
    first = archive(reply("x20261203-101010-abcd", 7), {FILE: b"PAR1"})
    result = bench("ledger", "export", "--parquet", str(tmp_path), "--since", "2026-12-01",
                   handler=serving(first, seen))
    assert result.exit_code == 0, result.output
    assert parse_qs(seen[0].url.query.decode()) == {"since": ["2026-12-01"]}
    assert (tmp_path / FILE).read_bytes() == b"PAR1"
    assert read_manifest(tmp_path).marks == {"seats": 7}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".export-")] == []  # no leftovers

    second = archive(reply("x20261203-111010-abcd", 9), {})
    result = bench("--json", "ledger", "export", "--parquet", str(tmp_path), handler=serving(second, seen))
    assert result.exit_code == 0, result.output
    assert parse_qs(seen[1].url.query.decode()) == {"after": ["seats:7"]}
    assert json.loads(result.stdout)["marks"] == {"seats": 9}
    assert [e.export for e in read_manifest(tmp_path).exports] == ["x20261203-101010-abcd",
                                                                    "x20261203-111010-abcd"]


def test_an_archive_reaching_outside_the_folder_is_refused(bench: Bench, tmp_path: Path) -> None:
    bad = archive(reply("x20261203-101010-abcd", 7), {"../escape.parquet": b"x"})
    result = bench("ledger", "export", "--parquet", str(tmp_path / "out"), handler=serving(bad, []))
    assert result.exit_code == 1 and "unexpected member" in result.output
    assert not (tmp_path / "escape.parquet").exists()
    assert read_manifest(tmp_path / "out").marks == {}
