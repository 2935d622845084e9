"""CAT-2's shipped snapshot is made from the feeds themselves (`services.prober.catalog_snapshot`): here from
the recorded documents on a local server; a failing feed writes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.catalog.cache import FeedCache
from shared.catalog.feeds import FEEDS, FeedEntry
from tests.fakes.feeds import FeedServer, Reply
from tests.fixtures.catalog import raw

ENV_NAMES = {"openrouter": "OPENROUTER", "models.dev": "MODELS_DEV", "freellmapi": "FREELLMAPI"}


@pytest.fixture
def feeds() -> Iterator[FeedServer]:
    server = FeedServer().start()
    for feed in FEEDS:
        server.replies[f"/{ENV_NAMES[feed]}"] = Reply(raw(feed))
    try:
        yield server
    finally:
        server.stop()


def snapshot(feeds: FeedServer, out: Path) -> subprocess.CompletedProcess[str]:
    env = {f"BENCH_CATALOG_{name}_URL": feeds.url(f"/{name}") for name in ENV_NAMES.values()}
    return subprocess.run([sys.executable, "-m", "services.prober.catalog_snapshot", str(out)],
                          env={**env, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)


def test_a_snapshot_is_written_from_the_feeds_and_reads_back(feeds: FeedServer, tmp_path: Path) -> None:
    out = tmp_path / "snapshot.json"
    done = snapshot(feeds, out)
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    entries = {feed: [FeedEntry.model_validate(e) for e in doc["feeds"][feed]] for feed in FEEDS}
    assert {feed: len(found) for feed, found in entries.items()} == {"openrouter": 4, "models.dev": 10,
                                                                     "freellmapi": 6}
    assert FeedCache(feed="models.dev", entries=entries["models.dev"]).entries[0].provider == "openrouter"


def test_a_failing_feed_writes_nothing(feeds: FeedServer, tmp_path: Path) -> None:
    feeds.replies["/FREELLMAPI"] = Reply(b"{}", status=500)
    out = tmp_path / "snapshot.json"
    done = snapshot(feeds, out)
    assert done.returncode != 0 and "freellmapi: answered HTTP 500" in done.stderr
    assert not out.exists()
