"""Every service's ops port on a real process: alive, ready once started, not ready without its bus,
Prometheus text; and streams whose replicas differ from the settings are reported, never changed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from nats.js.api import DiscardPolicy

from shared import bus, subjects
from shared.events import CollectionSaved, EndpointSaved, ModelRegistered
from shared.natsserver import NatsServer, free_port
from tests.integration.service_process import ServiceProcess


async def get(port: int, path: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=5) as client:
        return await client.get(f"http://127.0.0.1:{port}{path}")


async def until(check: object, within: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while not await check():  # type: ignore[operator]
        assert loop.time() < end, "the condition never held"
        await asyncio.sleep(0.2)


@pytest.mark.parametrize("service", ["seater", "caller", "ledger", "prober"])
async def test_a_service_is_alive_ready_and_measured(
    service: str, nats_server: NatsServer, tmp_path: Path
) -> None:
    port = free_port()
    proc = ServiceProcess(service, nats_server, tmp_path, {"BENCH_OPS_PORT": str(port)}).start()
    try:
        assert (await get(port, "/healthz")).status_code == 200

        async def ready() -> bool:
            return (await get(port, "/readyz")).status_code == 200

        await until(ready)
        text = (await get(port, "/metrics")).text
        assert "bench_bus_connected 1.0" in text
        nats_server.stop()

        async def not_ready() -> bool:
            answer = await get(port, "/readyz")
            return answer.status_code == 503 and "bus: not connected to NATS" in answer.json()["problems"]

        await until(not_ready)
        assert (await get(port, "/healthz")).status_code == 200  # alive all the same: no restart for this
    finally:
        proc.stop()


async def test_the_gateway_serves_the_same_port(nats_server: NatsServer, tmp_path: Path) -> None:
    port, ops = free_port(), free_port()
    env = {"BENCH_PORT": str(port), "BENCH_OPS_PORT": str(ops)}
    gateway = ServiceProcess("gateway", nats_server, tmp_path, env).start(ready_line="gateway_ready")
    try:
        assert (await get(ops, "/readyz")).json() == {"ready": True, "problems": []}
        await get(port, "/v1/models")
        text = (await get(ops, "/metrics")).text
        assert 'bench_http_requests_total{format="openai_chat",route="/v1/models",status="200"}' in text
    finally:
        gateway.stop()


async def test_replicas_that_differ_are_reported_and_left_alone(nc: bus.NATS) -> None:
    js = nc.jetstream()
    assert await bus.provision(js, replicas=1) == []
    found = await bus.provision(js, replicas=3, owner=True)
    said = f"stream {subjects.EVENTS_STREAM} has 1 replica(s) but BENCH_REPLICAS is 3"
    assert any(said in p for p in found)
    assert any(f"bucket {subjects.CONVERSATIONS_BUCKET}" in p for p in found)
    info = await js.stream_info(subjects.EVENTS_STREAM)
    assert info.config.num_replicas == 1 and info.config.discard == DiscardPolicy.NEW



async def test_a_draining_gateway_is_not_ready_while_it_finishes(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    port, ops = free_port(), free_port()
    env = {"BENCH_PORT": str(port), "BENCH_OPS_PORT": str(ops), "BENCH_DRAIN_S": "30",
           "BENCH_SEATER_PATIENCE_S": "8"}
    gateway = ServiceProcess("gateway", nats_server, tmp_path, env).start(ready_line="gateway_ready")
    base = f"http://127.0.0.1:{port}"
    try:
        nc = await bus.connect(nats_server.url, "test-admin", nats_server.login("admin"))
        try:
            for event in (EndpointSaved(id="cfg:e", name="fake", base="http://127.0.0.1:9/v1"),
                          ModelRegistered(id="cfg:m", alias="m-a", served="m-a", endpoint="fake"),
                          CollectionSaved(id="cfg:c", name="held", members=["m-a"])):
                await bus.publish_event(nc.jetstream(), event)
        finally:
            await nc.close()
        async with httpx.AsyncClient(timeout=30) as client:
            # No seater runs: the panel waits out the seater patience, so the request is held that long.
            held = asyncio.create_task(client.post(base + "/v1/chat/completions", json={
                "model": "bench/held", "messages": [{"role": "user", "content": "hi"}]}))
            await asyncio.sleep(1)
            assert gateway.proc is not None
            gateway.proc.send_signal(15)

            async def draining() -> bool:
                answer = await get(ops, "/readyz")
                return answer.status_code == 503 and any("draining" in p for p in answer.json()["problems"])

            await until(draining, within=5)
            reply = await held
            assert reply.status_code == 503 and "seater" in reply.text  # answered, not cut off
    finally:
        gateway.stop()
