"""HL-4 and HL-5 end to end on a real caller and ledger, the prober's side in-process with an injected
clock: a model gone from its endpoint's list raises the alert and is never retired on one listing (only
after 3 days); a model whose probe says it does not exist is retired once ONE confirming call says so too."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from services.prober.asking import ProbeAsker
from services.prober.deprecations import Deprecations
from services.prober.jobs import JobRunner
from services.prober.schedule import Due
from shared import bus, subjects
from shared.config_state import ConfigState
from shared.config_writer import ConfigWriter
from shared.events import EndpointSaved, ModelRegistered
from shared.natsserver import NatsServer
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess
from tests.integration.caller.test_caller_service import caller_env
from tests.integration.service_process import ServiceProcess


@pytest.fixture
async def ledger(nats_server: NatsServer, nc: bus.NATS, tmp_path: Path) -> AsyncIterator[ServiceProcess]:
    proc = ServiceProcess("ledger", nats_server, tmp_path / "ledger-home").start()
    try:
        yield proc
    finally:
        proc.stop()


def probed(provider: FakeProvider, served: str) -> int:
    return sum(1 for r in provider.requests() if r["model"] == served)


async def test_gone_is_alerted_then_retired_after_3_days_and_structural_after_one_confirming_call(
    nc: bus.NATS, prober_nc: bus.NATS, provider: FakeProvider, saved_endpoints: list[EndpointSaved],
    callers: Callable[..., CallerProcess], ledger: ServiceProcess,
) -> None:
    provider.set_model("dp-ok")
    provider.set_model("dp-gone", behaviour="unlisted")
    provider.set_model("dp-dead", behaviour="not_found")
    for name in ("dp-ok", "dp-gone", "dp-dead"):
        await bus.publish_event(nc.jetstream(), ModelRegistered(id=f"cfg:{name}", alias=name, served=name,
                                                                endpoint="fake"))
    callers(caller_env())
    config = ConfigState()
    projection = bus.Projection(prober_nc.jetstream(), subjects.CONFIG, config.apply, "test-prober")
    await projection.start()
    try:
        asker = ProbeAsker(prober_nc)
        now = datetime.now(UTC)
        await JobRunner(config, asker).run(Due("availability", now - timedelta(hours=1)), False)
        assert probed(provider, "dp-dead") == 1
        writer = ConfigWriter(prober_nc.jetstream(), projection, config)

        outcome, summary = await Deprecations(prober_nc, config, writer, asker, clock=lambda: now)(
            Due("deprecations", now))
        assert (outcome, summary) == ("done", "1 missing; retired 1, pending 1, held 0")
        assert probed(provider, "dp-dead") == 2  # the one confirming call
        assert config.retired["dp-dead"].why.startswith("auto: structural, confirmed")
        assert "dp-gone" in config.models  # one listing never retires
        gone, pending = config.alerts["model:gone:dp-gone"], config.alerts["model:pending:dp-gone"]
        assert (gone.kind, gone.by, gone.alias) == ("retired", "prober", "dp-gone")
        assert pending.kind == "retiring" and pending.message == "dp-gone retires in 3 days unless it answers"

        later = now + timedelta(days=3, hours=1)
        outcome, summary = await Deprecations(prober_nc, config, writer, asker, clock=lambda: later)(
            Due("deprecations", later))
        assert summary == "1 missing; retired 1, pending 0, held 0"
        assert config.retired["dp-gone"].why.startswith("auto: missing from its endpoint's list since")
        assert "dp-ok" in config.models
        assert not [k for k in config.alerts if k.endswith("dp-gone")]
    finally:
        await projection.stop()
