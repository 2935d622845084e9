"""HL-2 paced: a probe run over 30 models on a connection limited to 10 requests a minute never sends more
than 10 in any minute, and every model is still probed (one call at a time per connection, each held by
the callers' pacing until its window has room, none refused)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from services.prober.asking import ProbeAsker
from services.prober.jobs import JobRunner
from services.prober.schedule import Due
from shared import bus
from shared.config_state import ConfigState
from shared.events import EndpointSaved, LimitsSaved, ModelRegistered
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess
from tests.integration.caller.test_caller_service import caller_env

MODELS = [f"pace-{i:02d}" for i in range(30)]
ARRIVAL_JITTER_S = 1.0


@pytest.mark.slow
async def test_30_models_on_a_10_rpm_connection_are_all_probed_and_never_faster(
    nc: bus.NATS, prober_nc: bus.NATS, provider: FakeProvider, saved_endpoints: list[EndpointSaved],
    callers: Callable[..., CallerProcess],
) -> None:
    config = ConfigState()
    for endpoint in saved_endpoints:
        config.apply(endpoint)
    events = [LimitsSaved(id="cfg:rpm", scope="connection", name="fake", rpm=10),
              *(ModelRegistered(id=f"cfg:{m}", alias=m, served=m, endpoint="fake") for m in MODELS)]
    for event in events:
        config.apply(event, await bus.publish_event(nc.jetstream(), event))
    callers(caller_env())
    outcome, summary = await JobRunner(config, ProbeAsker(prober_nc)).run(
        Due("availability", datetime(2026, 1, 5, 4, tzinfo=UTC)), False)
    assert (outcome, summary) == ("done", "30 calls: 30 answered")
    sent = sorted(r["at"] for r in provider.requests() if r["model"] in MODELS)
    assert len(sent) == 30
    # Times are the provider's arrivals: the first request also opened the connection, so it arrives a
    # little later after its admission than the 11th (admitted 60 s after it) does; a second covers that.
    busiest = max(sum(1 for t in sent if start <= t < start + 60.0 - ARRIVAL_JITTER_S) for start in sent)
    assert busiest <= 10
    assert sent[-1] - sent[0] >= 120.0 - ARRIVAL_JITTER_S  # three windows of ten
