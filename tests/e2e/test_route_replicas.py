"""Route conversations across gateway replicas (issue 4): two gateway processes on one NATS share the
conversation table, so a conversation's next turn reaches its member whichever replica takes it, and goes
on when the replica that began it is gone."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import openai
import pytest

from cli.stack import Stack
from tests.e2e.conftest import Admin
from tests.e2e.route_support import SYSTEM, Bench, route_stack
from tests.fakes.provider import FakeProvider


@dataclass
class Rig:
    stack: Stack
    bench: Bench


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    provider = FakeProvider(log_path=tmp_path_factory.mktemp("fake") / "provider.log").start()
    try:
        with route_stack(tmp_path_factory.mktemp("stack"), provider, gateways=2) as stack:
            yield Rig(stack, Bench(Admin(stack.url), provider))
    finally:
        provider.stop()


def client(port: int) -> Any:
    return openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0, timeout=60)


def turn(port: int, name: str, *later: str) -> tuple[dict[str, Any], str]:
    """One turn of the same conversation (same system and first message), on the gateway at `port`."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM},
                                      {"role": "user", "content": "fix the flaky test"}]
    for said in later:
        messages += [{"role": "assistant", "content": "done"}, {"role": "user", "content": said}]
    chat = client(port).chat.completions
    raw = chat.with_raw_response.create(model=f"bench/{name}:route", messages=messages)
    bench: dict[str, Any] = raw.parse().model_extra["bench"]
    return bench, raw.headers["x-bench-model"]


def test_a_conversation_keeps_its_member_across_replicas_and_outlives_the_one_that_began_it(rig: Rig) -> None:
    port_a, port_b = rig.stack.gateway_ports
    name, members = rig.bench.members("ok", "ok", "ok")
    one, model = turn(port_a, name)
    two, _ = turn(port_b, name, "run it")
    assert (two["conversation"], two["alias"], two["turn"]) == (one["conversation"], one["alias"], 2)
    assert model == one["alias"] in members

    rig.stack.find("gateway", 0).stop()  # gateway A is gone; what it knew lives in the bus
    three, _ = turn(port_b, name, "run it", "and commit")
    assert (three["conversation"], three["alias"], three["turn"]) == (one["conversation"], one["alias"], 3)
    asked = [body["model"] for body in rig.bench.sent_to(one["alias"])]
    assert asked == [one["alias"]] * 3  # every turn reached the same member
