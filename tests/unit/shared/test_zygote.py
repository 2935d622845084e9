"""The zygote's reading of a spawn request: a whole one becomes a job; anything else is named, never run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.zygote import Job, parse

GOOD = {"id": 7, "module": "services.ledger", "args": [], "env": {"A": "1"}, "log": "/tmp/logs/ledger-0.log"}


def test_a_request_becomes_its_job_environment_and_log() -> None:
    assert parse(json.dumps(GOOD).encode()) == (
        7, Job("services.ledger", ()), {"A": "1"}, Path("/tmp/logs/ledger-0.log"), False)
    assert parse(json.dumps({**GOOD, "private": True}).encode())[4] is True  # a pipe comes with it
    composed = {**GOOD, "module": "services", "args": ["gateway", "console"]}
    assert parse(json.dumps(composed).encode())[1] == Job("services", ("gateway", "console"))


@pytest.mark.parametrize("line", [
    b"not json",
    b"[]",
    json.dumps({k: v for k, v in GOOD.items() if k != "module"}).encode(),
    json.dumps({**GOOD, "id": "seven"}).encode(),
    json.dumps({**GOOD, "env": ["A=1"]}).encode(),
])
def test_anything_else_is_refused_with_what_is_wrong(line: bytes) -> None:
    refused = parse(line)
    assert isinstance(refused, str) and refused.startswith("bad request: ")
