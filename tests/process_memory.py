"""What a running process holds, read from outside it (`/proc/<pid>/mem`, allowed for our own children)."""

from __future__ import annotations

import contextlib


def holds(pid: int, needle: bytes) -> bool:
    """Whether `needle` is anywhere in a process's writable memory (heap, stacks, anonymous maps): where an
    environment, a request read or a string built at run time would be."""
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as memory:
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith("rw"):
                continue
            low, high = (int(end, 16) for end in span.split("-"))
            with contextlib.suppress(OSError, OverflowError):  # a guard page, a map gone since
                memory.seek(low)
                if needle in memory.read(high - low):
                    return True
    return False
