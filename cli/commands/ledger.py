"""`bench ledger …`: the ledger's DuckDB file, a fold of the event stream."""

from __future__ import annotations

import shutil
import tarfile
import tempfile
from datetime import date
from pathlib import Path, PurePosixPath
from typing import Annotated, Any
from urllib.parse import urlencode

import typer

from cli.commands import noun_app
from cli.errors import CliError
from cli.output import confirm, stdout
from cli.session import session
from shared.commands import ExportReply
from shared.ledger_export import EXPORT_ENTRY, MANIFEST, read_manifest, recorded

app = noun_app("The ledger (DuckDB, folded from the event stream).")


@app.command("rebuild")
def rebuild(
    ctx: typer.Context,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Throw the ledger's tables away and fold the whole event stream again (POST /api/ledger/rebuild).

    Asks first on a terminal; elsewhere needs --yes.

    Example:

    \b
      bench ledger rebuild --yes
    """
    s = session(ctx)
    confirm("Rebuild the ledger from the event stream?", yes)
    with s.client() as client:
        reply = client.post("/api/ledger/rebuild")

    def human(data: Any) -> None:
        stdout.print(f"ledger rebuilt: {data.get('events', '?')} events in {data.get('seconds', '?')} s")

    s.emit(reply, human)


def unpack(archive: Path, folder: Path) -> ExportReply:
    """Move an export's files into `folder` (each name checked: a table's day folder, a Parquet file), then
    record it in the manifest, so an export cut short is asked again from the same marks."""
    with tarfile.open(archive) as tar:
        head = tar.extractfile(EXPORT_ENTRY)
        if head is None:
            raise CliError(f"the archive has no {EXPORT_ENTRY}: not a ledger export")
        reply = ExportReply.model_validate_json(head.read())
        for member in tar.getmembers():
            if member.name == EXPORT_ENTRY:
                continue
            parts = PurePosixPath(member.name).parts
            named = len(parts) == 3 and ".." not in parts and parts[2].endswith(".parquet")
            if not (member.isfile() and named):
                raise CliError(f"unexpected member in the archive: {member.name!r}")
            target = folder.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            assert source is not None  # a regular file
            with target.open("wb") as out:
                shutil.copyfileobj(source, out)
    manifest = recorded(read_manifest(folder), reply)
    written = folder / (MANIFEST + ".part")
    written.write_text(manifest.model_dump_json(indent=1))
    written.replace(folder / MANIFEST)
    return reply


@app.command("export")
def export(
    ctx: typer.Context,
    parquet: Annotated[Path, typer.Option("--parquet", help="The folder to write into (made if missing).",
                                          file_okay=False)],
    since: Annotated[str | None, typer.Option(
        help="Only rows of this UTC day or later (YYYY-MM-DD).")] = None,
) -> None:
    """Write the ledger's tables as Parquet into a folder, partitioned by UTC day (GET /api/ledger/export).

    Incremental: the folder's manifest.json records what was written, so running it again fetches only
    the newer rows. A row that changes later (a panel once answered, a newer quota record) comes again in a
    later export: keep each key's row with the highest seq. Readable meanwhile by DuckDB, pandas, Polars or
    Spark (hive partitioning).

    Example:

    \b
      bench ledger export --parquet ./ledger-parquet --since 2026-11-01
      duckdb -c "SELECT count(*) FROM './ledger-parquet/seats/*/*.parquet'"
    """
    if since is not None:
        try:
            date.fromisoformat(since)
        except ValueError:
            raise typer.BadParameter(f"{since!r} is not a day such as 2026-01-31",
                                     param_hint="--since") from None
    parquet.mkdir(parents=True, exist_ok=True)
    marks = read_manifest(parquet).marks
    query = [*([("since", since)] if since else []), *(("after", f"{t}:{seq}") for t, seq in marks.items())]
    s = session(ctx)
    with tempfile.NamedTemporaryFile(dir=parquet, prefix=".export-", suffix=".tar") as archive:
        with s.client() as client:
            client.download("/api/ledger/export?" + urlencode(query), archive)
        archive.flush()
        reply = unpack(Path(archive.name), parquet)
    if s.json:
        typer.echo(reply.model_dump_json())
        return
    total = sum(f.bytes for f in reply.files)
    rows = ", ".join(f"{table} {n}" for table, n in reply.rows.items()) or "nothing new"
    stdout.print(f"export {reply.export}: {rows}; {len(reply.files)} file(s), {total} bytes in {parquet}")
