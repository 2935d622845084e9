"""What a folder of ledger exports holds (`bench ledger export --parquet DIR`): the Parquet files under
`<table>/day=<YYYY-MM-DD>/`, and `manifest.json`, the exports written there and each table's mark (the
highest `seq` exported), so the next export asks only for newer rows. Also the tar framing the admin API
streams an export in (`export.json` first, then the files). Pure."""

from __future__ import annotations

import tarfile
from pathlib import Path

from pydantic import BaseModel, Field

from shared.commands import ExportReply

MANIFEST = "manifest.json"
EXPORT_ENTRY = "export.json"  # an archive's first member: the ledger's reply, files listed
BLOCK = 512


class Manifest(BaseModel):
    marks: dict[str, int] = Field(default_factory=dict)
    exports: list[ExportReply] = Field(default_factory=list)


def read_manifest(folder: Path) -> Manifest:
    path = folder / MANIFEST
    return Manifest.model_validate_json(path.read_text()) if path.exists() else Manifest()


def recorded(manifest: Manifest, export: ExportReply) -> Manifest:
    """The manifest once `export` is in the folder: marks only move forward."""
    marks = dict(manifest.marks)
    for table, seq in export.marks.items():
        marks[table] = max(seq, marks.get(table, 0))
    return Manifest(marks=marks, exports=[*manifest.exports, export])


def tar_header(name: str, size: int, mtime: float) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = size, int(mtime), 0o644
    return info.tobuf(format=tarfile.PAX_FORMAT)


def tar_padding(size: int) -> bytes:
    return b"\0" * (-size % BLOCK)


TAR_END = b"\0" * (2 * BLOCK)
