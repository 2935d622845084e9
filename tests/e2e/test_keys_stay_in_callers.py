"""Invariant 5 on a running stack: a provider key is in the callers' memory and in no other process's,
the zygote they are forked from included (their keys reach them through a pipe only they read)."""

from __future__ import annotations

from cli.stack import Stack
from tests.process_memory import holds

KEY = b"sk-test-not-a-real-key"  # what the session stack's callers get as BENCHWARMERS_KEY_FAKE


def processes_of(stack: Stack) -> dict[str, int]:
    found = {child.name: child.proc.pid for child in stack.children if child.proc is not None}
    assert stack.nats is not None and stack.nats.proc is not None
    assert stack.zygote is not None and stack.zygote.proc is not None
    return {**found, "nats-server": stack.nats.proc.pid, "zygote": stack.zygote.proc.pid}


def test_only_the_callers_hold_the_provider_key(stack: Stack) -> None:
    pids = processes_of(stack)
    holders = {name for name, pid in pids.items() if holds(pid, KEY)}
    assert holders == {child.name for child in stack.children if child.service == "caller"}


def test_only_the_callers_are_told_where_the_secrets_file_is(stack: Stack) -> None:
    """Keys typed at `--key-stdin` or got by a sign-in are in the data folder's secrets file: `bench up`
    hands its path to the callers alone."""
    where = f"BENCH_SECRETS_PATH={stack.home / 'secrets.env'}".encode()
    told = {name for name, pid in processes_of(stack).items() if holds(pid, where)}
    assert told == {child.name for child in stack.children if child.service == "caller"}
