"""The export folder's files: sweeping old exports and reading one file by chunks for the admin API."""

from __future__ import annotations

import base64
import shutil
import time
from pathlib import Path

from services.ledger import export
from shared.commands import ExportChunkReply, ExportChunkRequest


def sweep(root: Path) -> None:
    """Remove the exports written long enough ago that nobody is fetching them any more."""
    if not root.is_dir():
        return
    folders = [(p.name, p.stat().st_mtime) for p in root.iterdir() if p.is_dir()]
    for name in export.stale(folders, time.time()):
        shutil.rmtree(root / name, ignore_errors=True)


def read_chunk(root: Path, req: ExportChunkRequest) -> ExportChunkReply:
    """Raises ValueError for a file that is not one of that export's."""
    path = export.file_in(root, req.export, req.path)
    with path.open("rb") as f:
        f.seek(req.offset)
        data = f.read(export.CHUNK_BYTES)
    eof = req.offset + len(data) >= path.stat().st_size
    return ExportChunkReply(data=base64.b64encode(data).decode(), eof=eof)
