"""A closed-loop HTTP load client: `concurrency` workers POST one JSON body back to back.

Run as its own process so its CPU is not the measured services' CPU; prints one JSON line with every
request's latency and the error count. aiohttp, not httpx: FIELD-NOTES measured httpx topping out near
450-800 req/s per process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

import aiohttp

from shared import runtime

JSON = {"Content-Type": "application/json"}


class Tally:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.first_byte: list[float] = []
        self.marked: list[float] = []
        self.errors: list[str] = []


async def one(
    session: aiohttp.ClientSession, url: str, body: bytes, marker: bytes | None, tally: Tally
) -> None:
    """One request; with a marker, also when the first byte and the first byte string `marker` arrived."""
    start = time.perf_counter()
    first = seen = None
    tail = b""
    async with session.post(url, data=body, headers=JSON) as resp:
        async for chunk in resp.content.iter_any():
            now = time.perf_counter()
            first = first or now
            if marker is not None and seen is None:
                if marker in tail + chunk:
                    seen = now
                tail = (tail + chunk)[-len(marker) :]
        if resp.status != 200:
            tally.errors.append(f"HTTP {resp.status}")
            return
    tally.latencies.append(time.perf_counter() - start)
    if marker is not None:
        tally.first_byte.append((first or start) - start)
        if seen is None:
            tally.errors.append("marker never seen")
        else:
            tally.marked.append(seen - start)


async def fanned(session: aiohttp.ClientSession, url: str, body: bytes, fanout: int, tally: Tally) -> None:
    """`fanout` copies of the request at once, timed until the last has its whole reply: what a panel's
    fan-out costs the provider alone."""
    start = time.perf_counter()

    async def single() -> int:
        async with session.post(url, data=body, headers=JSON) as resp:
            await resp.read()
            return resp.status

    statuses = await asyncio.gather(*(single() for _ in range(fanout)))
    failed = [status for status in statuses if status != 200]
    if failed:
        tally.errors.append(f"HTTP {failed[0]}")
        return
    tally.latencies.append(time.perf_counter() - start)


async def worker(
    session: aiohttp.ClientSession,
    url: str,
    body: bytes,
    end: float,
    count: list[int],
    marker: bytes | None,
    tally: Tally,
    fanout: int = 1,
) -> None:
    while time.monotonic() < end and count[0] > 0:
        count[0] -= 1
        try:
            if fanout > 1:
                await fanned(session, url, body, fanout, tally)
            else:
                await one(session, url, body, marker, tally)
        except Exception as exc:
            tally.errors.append(type(exc).__name__)


async def run(
    url: str, body: bytes, concurrency: int, seconds: float, requests: int, marker: bytes | None = None,
    fanout: int = 1,
) -> dict[str, object]:
    tally = Tally()
    count = [requests]
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        start = time.perf_counter()
        end = time.monotonic() + seconds
        # `{worker}` in the body becomes each worker's number: e.g. one route conversation per worker.
        await asyncio.gather(
            *(
                worker(session, url, body.replace(b"{worker}", str(n).encode()), end, count, marker, tally,
                       fanout)
                for n in range(concurrency)
            )
        )
        wall = time.perf_counter() - start
    return {
        "latencies": tally.latencies,
        "first_byte": tally.first_byte,
        "marked": tally.marked,
        "errors": tally.errors,
        "wall": wall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Closed-loop JSON POST load client")
    parser.add_argument("url")
    parser.add_argument("--body", required=True, help="JSON body to POST")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--requests", type=int, default=10**9, help="stop after this many requests")
    parser.add_argument("--marker", help="also time the first byte and the first occurrence of this text")
    parser.add_argument("--fanout", type=int, default=1,
                        help="each request is this many copies sent at once, timed until the last ends")
    args = parser.parse_args()
    if args.fanout > 1 and args.marker:
        parser.error("--marker times one reply: it does not go with --fanout")
    marker = args.marker.encode() if args.marker else None
    result = runtime.run(  # the same event loop as the services: the client is never the bottleneck
        run(args.url, args.body.encode(), args.concurrency, args.seconds, args.requests, marker, args.fanout)
    )
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
