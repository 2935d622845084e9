"""K-12: the deprecations job sweeps only the alerts it raised, so the catalog's `went paid` stays up and
the free-tier guard keeps holding the model (CAT-3)."""

from __future__ import annotations

from typing import Any, cast

from nats.aio.client import Client as NATS

from services.prober.asking import ProbeAsker
from services.prober.deprecations import Deprecations
from shared.alerts import paid_key
from shared.config_state import ConfigState
from shared.config_writer import ConfigWriter
from shared.events import AlertRaised
from tests.unit.factories import config, endpoint, model


class NoBus:
    def jetstream(self) -> Any:
        return None


class Writes:
    def __init__(self) -> None:
        self.rules: list[Any] = []

    async def write(self, rule: Any) -> None:
        self.rules.append(rule)


async def test_k12_the_served_check_never_sweeps_the_catalogs_went_paid() -> None:
    key = paid_key("vendor/fast:free")
    paid = AlertRaised(id="cfg:paid", by="catalog", key=key, kind="went paid", alias="fast",
                       message="listed with a price now")
    state: ConfigState = config(endpoint(), model("fast", served="vendor/fast:free"), paid)
    writes = Writes()
    job = Deprecations(cast(NATS, NoBus()), state, cast(ConfigWriter, writes), cast(ProbeAsker, None))
    await job.sweep(raised=set())
    assert writes.rules == [] and key in state.alerts
