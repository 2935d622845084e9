"""O-1..O-3 with real prober and caller processes and the fake provider: two probers take batches queued
concurrently and run their models one at a time; the prober running a step is killed (SIGKILL) and the
other takes its item over, which ends once, each probe call asked of the provider once (A-94); a model that
does not answer its probe stays registered with an "onboard stopped" issue (A-95)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from services.prober.onboard_queue import KEY
from services.prober.onboard_rules import QueueDoc
from shared import bus, rpc, subjects
from shared.config_state import ConfigState
from shared.events import EndpointSaved, OnboardProgress, decode_event
from shared.natsserver import NatsServer
from shared.onboarding import OnboardAsk, OnboardReply, OnboardRequest
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess
from tests.integration.caller.test_caller_service import caller_env, stored_events
from tests.integration.service_process import ServiceProcess

LEASE_S = "3"


def prober(nats_server: NatsServer, home: Path, name: str) -> ServiceProcess:
    env = {"BENCH_ONBOARD_LEASE_S": LEASE_S, "BENCH_ONBOARD_TICK_S": "0.2"}
    return ServiceProcess("prober", nats_server, home, env, log_name=name)


async def queue_doc(nc: bus.NATS) -> QueueDoc:
    kv = await nc.jetstream().key_value(subjects.ONBOARD_BUCKET)
    return QueueDoc.model_validate_json((await kv.get(KEY)).value or b"{}")


async def until_finished(nc: bus.NATS, count: int, within: float) -> QueueDoc:
    end = time.monotonic() + within
    while True:
        doc = await queue_doc(nc)
        if len(doc.items) == count and all(i.state not in ("queued", "running") for i in doc.items):
            return doc
        if time.monotonic() > end:
            raise AssertionError(f"the queue did not finish: {doc.model_dump_json()}")
        await asyncio.sleep(0.2)


async def ask(nc: bus.NATS, *served: str, mode: str = "quick") -> OnboardReply:
    items = [OnboardAsk(served=s, endpoint="fake", mode=mode) for s in served]
    return await rpc.call(nc, subjects.RPC_PROBER_ONBOARD, OnboardRequest(action="queue", items=items),
                          OnboardReply, timeout=30)


async def act(nc: bus.NATS, action: str) -> OnboardReply:
    req = OnboardRequest(action=action)  # type: ignore[arg-type]
    return await rpc.call(nc, subjects.RPC_PROBER_ONBOARD, req, OnboardReply)


def chat_models(provider: FakeProvider) -> list[str]:
    return [r["model"] for r in provider.requests() if r["path"].endswith("/chat/completions")]


async def registered(nc: bus.NATS) -> ConfigState:
    state = ConfigState()
    for raw in await stored_events(nc, subjects.CONFIG):
        state.apply(decode_event(raw))  # type: ignore[arg-type]
    return state


async def test_two_probers_run_concurrent_batches_one_at_a_time_and_a_killed_runner_is_taken_over(
    nats_server: NatsServer, nc: bus.NATS, provider: FakeProvider, saved_endpoints: list[EndpointSaved],
    callers: Callable[..., CallerProcess], tmp_path: Path,
) -> None:
    models = ["ob-a", "ob-b", "ob-c", "ob-d"]
    for name in models:
        provider.set_model(name, latency_ms=700)
    provider.reset_requests()
    callers(caller_env())
    probers = [prober(nats_server, tmp_path / "home", f"prober-{n}").start() for n in (1, 2)]
    try:
        replies = await asyncio.gather(ask(nc, "ob-a", "ob-b"), ask(nc, "ob-c", "ob-d", mode="full"))
        assert all(len(r.items) >= 2 for r in replies)
        end = time.monotonic() + 30
        while not chat_models(provider):  # the first model's probe is under way
            assert time.monotonic() < end, "no probe call reached the provider"
            await asyncio.sleep(0.05)
        doc = await queue_doc(nc)
        victim = next(p for p in probers if doc.runner.endswith(f"-{p.pid}"))
        taken = next(i for i in doc.items if i.state == "running")
        victim.kill()

        doc = await until_finished(nc, 4, 120)
        assert sorted(i.served for i in doc.items) == sorted(models)  # none vanished
        assert [i.state for i in doc.items] == ["done"] * 4, doc.model_dump_json()
        again = next(i for i in doc.items if i.id == taken.id)
        assert again.attempts == 2
        # One model at a time: each model's probe calls reach the provider in one block, and each once.
        seen = chat_models(provider)
        blocks = [m for n, m in enumerate(seen) if n == 0 or seen[n - 1] != m]
        assert len(blocks) == 4 and sorted(blocks) == sorted(models), seen
        assert all(seen.count(m) == 4 for m in models), seen
        state = await registered(nc)
        assert {m.served for m in state.models.values()} >= set(models)
        events = [e for raw in await stored_events(nc, f"{subjects.ONBOARD_PREFIX}.>")
                  if isinstance(e := decode_event(raw), OnboardProgress)]
        took_over = [e for e in events if e.item == taken.id and e.attempt == 2]
        assert took_over and took_over[0].note == "taken over after its prober stopped"
        assert not any(e.instance.endswith(f"-{victim.pid}") for e in events if e.attempt == 2)
    finally:
        for p in probers:
            p.stop()


async def test_a95_a_model_that_does_not_answer_its_probe_stays_registered_with_an_issue(
    nats_server: NatsServer, nc: bus.NATS, provider: FakeProvider, saved_endpoints: list[EndpointSaved],
    callers: Callable[..., CallerProcess], tmp_path: Path,
) -> None:
    provider.set_model("ob-dead", behaviour="error_500")
    callers(caller_env())
    one = prober(nats_server, tmp_path / "home", "prober-1").start()
    try:
        await ask(nc, "ob-dead")
        doc = await until_finished(nc, 1, 60)
        item = doc.items[0]
        assert (item.state, item.step, item.alias) == ("no answer", 4, "ob-dead")
        assert item.note.startswith("onboard stopped: none of its 4 probe calls answered")
        assert [(i.served, i.failure) for i in doc.issues] == [("ob-dead", "no answer")]
        assert "ob-dead" in (await registered(nc)).models
        # once registered, the same model is refused as a whole with the rest of its batch.
        try:
            await ask(nc, "ob-dead", "ob-other")
        except rpc.RpcFailure as refused:
            assert refused.status == 409  # registered (in the way) and not listed (no such thing)
            assert "'ob-dead' on 'fake' is already registered as 'ob-dead'" in refused.message
            assert "fake does not list 'ob-other'" in refused.message
        else:
            raise AssertionError("a registered model was queued again")
        assert len((await queue_doc(nc)).items) == 1
    finally:
        one.stop()


async def test_a94_stop_skips_the_queued_models_and_lets_the_running_one_finish(
    nats_server: NatsServer, nc: bus.NATS, provider: FakeProvider, saved_endpoints: list[EndpointSaved],
    callers: Callable[..., CallerProcess], tmp_path: Path,
) -> None:
    for name in ("st-a", "st-b", "st-c"):
        provider.set_model(name, latency_ms=500)
    provider.reset_requests()
    callers(caller_env())
    one = prober(nats_server, tmp_path / "home", "prober-1").start()
    try:
        await ask(nc, "st-a", "st-b", "st-c")
        end = time.monotonic() + 30
        while not chat_models(provider):
            assert time.monotonic() < end, "no probe call reached the provider"
            await asyncio.sleep(0.05)
        stopped = await act(nc, "stop")
        assert stopped.stopping and [i.state for i in stopped.items] == ["running", "skipped", "skipped"]
        doc = await until_finished(nc, 3, 60)
        assert [(i.served, i.state) for i in doc.items] == [("st-a", "done"), ("st-b", "skipped"),
                                                              ("st-c", "skipped")]
        assert set(chat_models(provider)) == {"st-a"} and not doc.stopping
        cleared = await act(nc, "clear")
        assert cleared.items == []
    finally:
        one.stop()
