"""`python -m services.prober.catalog_snapshot [PATH]`: fetch the three catalog feeds now (the prober's
`BENCH_CATALOG_*` settings) and write them as the dated snapshot the package ships
(`shared/catalog/snapshot.json` by default), the facts a first run has before any feed is reached (CAT-2).
Refuses to write when a feed fails, so a snapshot is always whole."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import date
from pathlib import Path

from services.prober import catalog_fetch
from services.prober.catalog_fetch import FeedFailed, FeedLimits
from shared.catalog.cache import SNAPSHOT
from shared.catalog.feeds import FEEDS
from shared.settings import ProberSettings, settings_or_exit

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "catalog" / SNAPSHOT


async def taken(limits: FeedLimits) -> dict[str, list[dict[str, object]]]:
    """Every feed's entries, as the snapshot stores them; `FeedFailed` naming the feed that failed."""
    feeds: dict[str, list[dict[str, object]]] = {}
    async with catalog_fetch.client(limits.timeout_s) as http:
        for feed in FEEDS:
            try:
                entries = await catalog_fetch.fetch_feed(http, feed, limits)
            except FeedFailed as failed:
                raise FeedFailed(f"{feed}: {failed}") from None
            feeds[feed] = [e.model_dump(mode="json", exclude_defaults=True) for e in entries]
    return feeds


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    limits = FeedLimits.of(settings_or_exit(ProberSettings, "prober"))
    try:
        feeds = asyncio.run(taken(limits))
    except FeedFailed as failed:
        raise SystemExit(f"catalog_snapshot: {failed}; nothing written") from None
    note = "Taken from the feeds by services.prober.catalog_snapshot."
    doc = {"taken": date.today().isoformat(), "note": note, "feeds": feeds}
    out.write_text(json.dumps(doc, indent=0) + "\n")
    print(f"wrote {out}: " + ", ".join(f"{feed} {len(entries)}" for feed, entries in feeds.items()))


if __name__ == "__main__":
    main()
