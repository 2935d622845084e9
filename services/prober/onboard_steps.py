"""One onboarding item's steps (O-1): (1) the endpoint lists the served id, (2) register it, (3) its facts
(an image generator stops here), (4) the probe, (5) the suite pass (`full` only; O-2).

Every step is safe to run again, so an item taken over after its prober died runs them all from the start:
the listing only reads, registration is skipped when the model is already on its endpoint, the probe's call
ids are derived from the item (calls already answered are found in the stream, not sent again), and a suite
pass asks again. Calls go through the callers like any probe (keys, pacing, the free-tier guard stay there).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from nats.aio.client import Client as NATS

from services.prober.asking import ProbeAsker
from services.prober.onboard_facts import Facts, model_facts
from services.prober.onboard_rules import Outcome, not_listed
from services.prober.onboard_runner import AtStep
from services.prober.suite_calls import NotRunnable
from services.prober.suite_job import SuiteJob
from shared import rpc, subjects
from shared.aliases import default_alias
from shared.catalog.merge import Catalog, facts_for
from shared.commands import ListedModel, ModelsReply, ModelsRequest, SeatCall
from shared.config_state import ConfigState
from shared.config_writer import ConfigWriter, config_caught_up
from shared.events import ConfigEvent, ModelRegistered
from shared.ids import utcnow
from shared.model_facts import ModelFacts
from shared.onboarding import OnboardIssue, OnboardItem
from shared.probe_calls import LARGE, TINY, probe_call

LIST_TIMEOUT_S = 60.0
BY = "onboard"


class StepFailed(Exception):
    """The item cannot go on; its note says why."""


def probe_samples(served: str) -> int:
    """O-1: two samples of each probe prompt, one for a `:free` model."""
    return 1 if served.endswith(":free") else 2


def probe_run(item: OnboardItem) -> str:
    """The probe's run id, one per item, so a taken-over item asks the same calls."""
    return f"ob-{item.id}"


def register_rule(item: OnboardItem, facts: Facts, catalogued: ModelFacts | None = None
                  ) -> Callable[[ConfigState, str], ConfigEvent]:
    """Registers what the listing says as the registration's facts and the catalog's as the catalog layer
    (C-15), so route mode and image panels take the model exactly when its facts say tools or vision."""

    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        if item.endpoint not in state.endpoints:
            raise StepFailed(f"the endpoint {item.endpoint} was removed")
        place = (item.served, item.endpoint)
        if any((r.model.served, r.model.endpoint) == place for r in state.retired.values()):
            raise StepFailed(f"{item.served} on {item.endpoint} was retired meanwhile")
        alias = default_alias(item.served, item.endpoint, state)
        if alias in state.models or alias in state.retired or alias in state.renamed:
            raise StepFailed(f"its alias {alias!r} is taken; register it by hand with an alias of your own")
        return ModelRegistered(id=event_id, by=BY, alias=alias, served=item.served, endpoint=item.endpoint,
                               context_window=facts.context_window, max_output=facts.max_output,
                               role=facts.role, ad_hoc=item.mode == "quick-adhoc", vision=facts.vision,
                               tools=facts.tools, facts=catalogued)

    return rule


@dataclass
class OnboardSteps:
    nc: NATS
    config: ConfigState
    writer: ConfigWriter
    asker: ProbeAsker
    suite: SuiteJob
    facts: Callable[[str, ListedModel | None], Facts] = model_facts
    # CAT-1: the catalog as the last refresh left it (before the first, the shipped snapshot); None: none.
    catalog: Callable[[], Awaitable[Catalog]] | None = None

    async def run(self, item: OnboardItem, at_step: AtStep) -> Outcome:
        try:
            return await self._run(item, at_step)
        except StepFailed as exc:
            return Outcome("failed", str(exc))

    async def _run(self, item: OnboardItem, at_step: AtStep) -> Outcome:
        await at_step(1, "")
        listed = await self.listed(item)
        await at_step(2, "")
        alias, facts = await self.registered(item, listed)
        await at_step(3, alias)
        if facts.role == "image":
            return Outcome("done", "an image generator: registered with role image, not probed", alias)
        await at_step(4, alias)
        answered, asked = await self.probe(item, alias)
        if not answered:
            note = f"onboard stopped: none of its {asked} probe calls answered; it stays registered"
            issue = OnboardIssue(at=utcnow(), served=item.served, endpoint=item.endpoint, alias=alias, step=4,
                                 failure="no answer", detail=note)
            return Outcome("no answer", note, alias, issue)
        probed = f"{answered} of {asked} probe calls answered"
        await at_step(5, alias)
        if item.mode != "full":
            return Outcome("done", f"{probed}; suite skipped ({item.mode})", alias)
        return Outcome("done", f"{probed}; {await self.suite_pass(alias)}", alias)

    async def listed(self, item: OnboardItem) -> ListedModel:
        ep = self.config.endpoints.get(item.endpoint)
        if ep is None:
            raise StepFailed(f"the endpoint {item.endpoint} was removed")
        ask = ModelsRequest(endpoint=ep.name, base=ep.base, api=ep.api, headers=ep.headers)
        try:
            reply = await rpc.call(self.nc, subjects.RPC_CALLER_MODELS, ask, ModelsReply, LIST_TIMEOUT_S,
                                   patience_s=30.0)
        except rpc.RpcFailure as failure:
            raise StepFailed(f"{item.endpoint}'s model list failed: {failure.message}") from None
        found = next((m for m in reply.models if m.id == item.served), None)
        if found is None:
            raise StepFailed(not_listed(item.served, item.endpoint, [m.id for m in reply.models]))
        return found

    async def registered(self, item: OnboardItem, listed: ListedModel) -> tuple[str, Facts]:
        facts = self.facts(item.served, listed)
        catalogued = None
        endpoint = self.config.endpoints.get(item.endpoint)
        if self.catalog is not None and endpoint is not None:
            catalogued = facts_for(item.served, endpoint, await self.catalog(), listed)
        await config_caught_up(self.writer.js, self.writer.projection)
        place = (item.served, item.endpoint)
        alias = next((a for a, m in self.config.models.items() if (m.served, m.endpoint) == place), None)
        if alias is None:
            event = await self.writer.write(register_rule(item, facts, catalogued))
            assert isinstance(event, ModelRegistered)
            alias = event.alias
        return alias, replace(facts, role=self.config.models[alias].role)

    def probe_calls(self, item: OnboardItem, alias: str) -> list[SeatCall]:
        model, now = self.config.models[alias], utcnow().timestamp()
        return [probe_call(self.config, probe_run(item), model, kind, now, sample=n, task="onboard")
                for kind in (TINY, LARGE) for n in range(probe_samples(item.served))]

    async def probe(self, item: OnboardItem, alias: str) -> tuple[int, int]:
        """O-1 step 4, one call at a time (paced): how many answered, of how many."""
        calls = self.probe_calls(item, alias)
        answered = 0
        for call in calls:
            done = await self.asker.ask(call)
            answered += done is not None and done.status == "ok"
        return answered, len(calls)

    async def suite_pass(self, alias: str) -> str:
        try:
            outcome = await self.suite.run(model=alias)
        except NotRunnable as exc:
            return f"suite not run: {exc}"
        ok = sum(1 for r in outcome.results if r.kind == "answered")
        return f"suite: {len(outcome.results)} tasks asked, {ok} answered"
