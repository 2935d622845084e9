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


async def worker(session: aiohttp.ClientSession, url: str, body: bytes, end: float, count: list[int],
                 latencies: list[float], errors: list[str]) -> None:
    headers = {"Content-Type": "application/json"}
    while time.monotonic() < end and count[0] > 0:
        count[0] -= 1
        start = time.perf_counter()
        try:
            async with session.post(url, data=body, headers=headers) as resp:
                await resp.read()
                if resp.status != 200:
                    errors.append(f"HTTP {resp.status}")
                    continue
        except Exception as exc:
            errors.append(type(exc).__name__)
            continue
        latencies.append(time.perf_counter() - start)


async def run(url: str, body: bytes, concurrency: int, seconds: float, requests: int) -> dict[str, object]:
    latencies: list[float] = []
    errors: list[str] = []
    count = [requests]
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        start = time.perf_counter()
        end = time.monotonic() + seconds
        await asyncio.gather(*(worker(session, url, body, end, count, latencies, errors)
                               for _ in range(concurrency)))
        wall = time.perf_counter() - start
    return {"latencies": latencies, "errors": errors, "wall": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description="Closed-loop JSON POST load client")
    parser.add_argument("url")
    parser.add_argument("--body", required=True, help="JSON body to POST")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--requests", type=int, default=10**9, help="stop after this many requests")
    args = parser.parse_args()
    result = asyncio.run(run(args.url, args.body.encode(), args.concurrency, args.seconds, args.requests))
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
