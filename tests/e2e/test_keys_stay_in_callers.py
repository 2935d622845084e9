"""Invariant 5 on a running stack: a provider key is in the callers' environment and in no other process."""

from __future__ import annotations

from pathlib import Path

from cli.stack import Stack

KEY = b"sk-test-not-a-real-key"  # what the session stack's callers get as BENCHWARMERS_KEY_FAKE


def environment(pid: int) -> bytes:
    return Path(f"/proc/{pid}/environ").read_bytes()


def test_only_the_callers_hold_the_provider_key(stack: Stack) -> None:
    holders = {child.name for child in stack.children if child.proc and KEY in environment(child.proc.pid)}
    callers = {child.name for child in stack.children if child.service == "caller"}
    assert callers and holders == callers
    assert stack.nats is not None and stack.nats.proc is not None
    assert KEY not in environment(stack.nats.proc.pid)


def test_only_the_callers_are_told_where_the_secrets_file_is(stack: Stack) -> None:
    """Keys typed at `--key-stdin` or got by a sign-in are in the data folder's secrets file: `bench up`
    hands its path to the callers alone."""
    where = f"BENCH_SECRETS_PATH={stack.home / 'secrets.env'}".encode()
    told = {child.name for child in stack.children if child.proc and where in environment(child.proc.pid)}
    assert told == {child.name for child in stack.children if child.service == "caller"}
