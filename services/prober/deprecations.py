"""The deprecations job (HL-4 then HL-5): list every endpoint through a caller, record what is missing,
weigh each model's evidence from the ledger, make the one confirming call the immediate rule asks for,
then retire, or raise and sweep the alerts (C-16) that say what is coming.

Alerts the prober raised and no longer finds are cleared (self-clearing, C-16); alerts anyone else raised
are left alone. Every write is a config event through `ConfigWriter`, as an admin's would be.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta

import structlog
from nats.aio.client import Client as NATS
from nats.js.errors import NotFoundError

from services.prober import retirement
from services.prober.asking import ProbeAsker
from services.prober.probes import probed_models, run_id
from services.prober.schedule import Due
from services.prober.served import gone_message, missing_models
from shared import bus, rpc, subjects
from shared.alerts import kind_of, pending_key
from shared.commands import EvidenceReply, EvidenceRequest, ModelsReply, ModelsRequest
from shared.config_state import ConfigState
from shared.config_writer import ConfigWriter
from shared.events import AlertCleared, AlertRaised, ConfigEvent, MissingModel, ModelRetired, ServedChecked
from shared.failures import failure_class
from shared.ids import event_id, utcnow
from shared.probe_calls import CONFIRM, probe_call

EVIDENCE_DAYS = 14
LIST_TIMEOUT_S = 40.0
BY = "prober"
SWEPT = ("model:pending:", "connection:held:", "model:gone:")

log = structlog.get_logger("prober.deprecations")


class Deprecations:
    def __init__(self, nc: NATS, config: ConfigState, writer: ConfigWriter, asker: ProbeAsker,
                 clock: Callable[[], datetime] = utcnow) -> None:
        self.nc, self.js, self.config, self.writer, self.asker = nc, nc.jetstream(), config, writer, asker
        self.clock = clock

    async def __call__(self, due: Due) -> tuple[str, str]:
        now = self.clock()
        missing = await self.served_check(now)
        evidence = await rpc.call(self.nc, subjects.RPC_LEDGER_EVIDENCE,
                                  EvidenceRequest(since=now - timedelta(days=EVIDENCE_DAYS)), EvidenceReply,
                                  timeout=30.0)
        assessment = retirement.assess(self.models(evidence, missing), now)
        verdicts = [await self.confirmed(v, due) if v.action == "confirm" else v for v in assessment.verdicts]
        raised = await self.apply(verdicts, assessment.held, missing, now)
        await self.sweep(raised)
        counts = {a: sum(1 for v in verdicts if v.action == a) for a in ("retire", "pending", "held")}
        return "done", (f"{len(missing)} missing; retired {counts['retire']}, pending {counts['pending']}, "
                        f"held {counts['held']}")

    # ------------------------------------------------------------ HL-4

    async def served_check(self, now: datetime) -> list[MissingModel]:
        """Each endpoint's listing against its registered models; the missing ones (a `ServedChecked`
        event), or the last check's when the default endpoint cannot be listed."""
        previous = await self.last_check()
        listings: dict[str, set[str]] = {}
        unreachable: dict[str, str] = {}
        for name, endpoint in self.config.endpoints.items():
            ask = ModelsRequest(endpoint=name, base=endpoint.base, api=endpoint.api, headers=endpoint.headers)
            try:
                reply = await rpc.call(self.nc, subjects.RPC_CALLER_MODELS, ask, ModelsReply,
                                       timeout=LIST_TIMEOUT_S)
            except rpc.RpcFailure as failure:
                unreachable[name] = failure.message[:300]
                continue
            listings[name] = {m.id for m in reply.models}
        default = self.config.default_endpoint()
        if default is not None and default in unreachable:
            log.warning("served_check_abandoned", endpoint=default, why=unreachable[default])
            return previous.missing if previous else []
        missing = missing_models(self.config, listings, previous.missing if previous else [], now)
        check = ServedChecked(id=event_id("served", now.isoformat()), by=BY, at=now,
                              listed={n: len(ids) for n, ids in listings.items()}, unreachable=unreachable,
                              missing=missing)
        await bus.publish_event(self.js, check)
        return missing

    async def last_check(self) -> ServedChecked | None:
        try:
            raw = await self.js.get_last_msg(subjects.EVENTS_STREAM, subjects.SERVED_CHECKS)
        except NotFoundError:
            return None
        return ServedChecked.model_validate_json(raw.data or b"")

    # ------------------------------------------------------------ HL-5

    def models(self, evidence: EvidenceReply, missing: list[MissingModel]) -> list[retirement.Model]:
        rows = retirement.evidence_by_alias(
            (line.alias, retirement.Evidence(line.at, line.answered, line.failure, line.detail, line.probe))
            for line in evidence.rows
        )
        since = {m.alias: m.since for m in missing}
        return [
            retirement.Model(m.alias, m.served, self.config.connection_of(m.alias), rows.get(m.alias, ()),
                             evidence.restored.get(m.alias), since.get(m.alias))
            for m in probed_models(self.config)
        ]

    async def confirmed(self, verdict: retirement.Verdict, due: Due) -> retirement.Verdict:
        """The immediate rule's ONE confirming call (the tiny prompt, 90 s)."""
        model = self.config.models.get(verdict.alias)
        if model is None:
            return verdict
        call = probe_call(self.config, run_id(due.job, due.at), model, CONFIRM, time.time(), task=due.job)
        done = await self.asker.ask(call)
        if done is None:
            return retirement.after_confirming(verdict, "timeout", "")
        return retirement.after_confirming(verdict, failure_class(done.status, done.error, done.answer),
                                           done.error)

    async def apply(self, verdicts: list[retirement.Verdict], held: dict[str, list[str]],
                    missing: list[MissingModel], now: datetime) -> set[str]:
        """Retire, and raise the alerts; the keys raised (the sweep keeps those)."""
        raised: set[str] = set()
        for v in verdicts:
            model = self.config.models.get(v.alias)
            if model is None:
                continue
            if v.action == "retire":
                await self.write(ModelRetired(id="", by=BY, alias=v.alias, why=f"auto: {v.why}"))
            elif v.action == "pending":
                key = pending_key(model.served)
                raised.add(key)
                by = now + timedelta(days=v.days)
                action = (f"{v.why}; it retires on {by:%Y-%m-%d} unless it answers: "
                          f"`bench model retry {v.alias}` (POST /api/retry) asks it now")
                await self.alert(key, retirement.pending_message(v.alias, v.days), action, alias=v.alias)
        for conn, aliases in held.items():
            key = f"connection:held:{conn}"
            raised.add(key)
            await self.alert(key, f"every model on {conn} is failing; none is retired while all are down",
                             "Retire all", aliases=aliases)
        for gone in missing:
            if gone.alias in self.config.models:
                key = f"model:gone:{gone.served}"
                raised.add(key)
                await self.alert(key, gone_message(gone), "", alias=gone.alias)
        return raised

    async def alert(self, key: str, message: str, action: str, alias: str | None = None,
                    aliases: list[str] | None = None) -> None:
        kind = kind_of(key)
        assert kind is not None
        await self.write(AlertRaised(id="", by=BY, key=key, kind=kind, message=message, action=action,
                                     alias=alias, aliases=aliases or []))

    async def sweep(self, raised: set[str]) -> None:
        for key, alert in list(self.config.alerts.items()):
            if alert.by == BY and key.startswith(SWEPT) and key not in raised:
                await self.write(AlertCleared(id="", by=BY, key=key))

    async def write(self, event: ConfigEvent) -> None:
        def rule(state: ConfigState, event_id: str) -> ConfigEvent:
            return event.model_copy(update={"id": event_id})

        await self.writer.write(rule)
        log.info("prober_wrote", type=type(event).__name__, name=getattr(event, "alias", None)
                 or getattr(event, "key", None))
