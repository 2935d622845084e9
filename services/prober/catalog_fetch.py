"""Fetching one catalog feed (CAT-2) with httpx: no key, no cookie, a cap on the bytes read and on the
time the whole fetch takes. Whatever goes wrong (down, slow, too large, not JSON, not the feed's shape,
empty) is one `FeedFailed` with a short reason, so the refresh keeps the entries it had."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import httpx

from shared.catalog.feeds import FREELLMAPI, MODELS_DEV, OPENROUTER, PARSERS, FeedEntry, Malformed
from shared.settings import ProberSettings


class FeedFailed(Exception):
    """The feed gave nothing usable this time; the message says why (never a secret: feeds take none)."""


@dataclass(frozen=True)
class FeedLimits:
    urls: dict[str, str]
    max_bytes: int
    timeout_s: float

    @classmethod
    def of(cls, settings: ProberSettings) -> FeedLimits:
        return cls({OPENROUTER: settings.catalog_openrouter_url, MODELS_DEV: settings.catalog_models_dev_url,
                    FREELLMAPI: settings.catalog_freellmapi_url},
                   settings.catalog_max_bytes, settings.catalog_timeout_s)


async def read_capped(client: httpx.AsyncClient, url: str, max_bytes: int) -> bytes:
    async with client.stream("GET", url, headers={"Accept": "application/json"}) as reply:
        if reply.status_code != 200:
            raise FeedFailed(f"answered HTTP {reply.status_code}")
        declared = reply.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise FeedFailed(f"too large: {int(declared):,} bytes (the cap is {max_bytes:,})")
        body = bytearray()
        async for chunk in reply.aiter_bytes():
            body += chunk
            if len(body) > max_bytes:
                raise FeedFailed(f"too large: more than {max_bytes:,} bytes")
        return bytes(body)


async def fetch_feed(client: httpx.AsyncClient, feed: str, limits: FeedLimits) -> list[FeedEntry]:
    """The feed's entries, or `FeedFailed`."""
    try:
        async with asyncio.timeout(limits.timeout_s):
            body = await read_capped(client, limits.urls[feed], limits.max_bytes)
    except TimeoutError:
        raise FeedFailed(f"no whole answer within {limits.timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise FeedFailed(f"unreachable ({type(exc).__name__})") from None
    try:
        entries = PARSERS[feed](json.loads(body))
    except ValueError as exc:  # Malformed is a ValueError, as is bad JSON
        why = str(exc) if isinstance(exc, Malformed) else "not JSON"
        raise FeedFailed(f"malformed: {why}") from None
    if not entries:
        raise FeedFailed("listed no model")  # taken as is, it would wipe every fact
    return entries


def client(timeout_s: float) -> httpx.AsyncClient:
    """No credentials of any kind; redirects followed (models.dev redirects)."""
    return httpx.AsyncClient(timeout=httpx.Timeout(timeout_s), follow_redirects=True,
                             headers={"User-Agent": "benchwarmers-catalog"})
