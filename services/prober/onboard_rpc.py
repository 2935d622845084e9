"""`bench.rpc.prober.onboard` (queue group `probers`): queue, status, stop, clear, candidates, dismiss.

Any prober replica answers; the queue is the one document in `bench_onboard` every replica shares, so a
batch queued through one replica is run by whichever holds the turn. A batch is checked against the
endpoint listings (asked of a caller) and the queue as it is at the moment of the write.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence

from nats.aio.client import Client as NATS

from services.prober import onboard_candidates as cands
from services.prober import onboard_rules as rules
from services.prober.onboard_queue import OnboardQueue
from services.prober.onboard_rules import QueueDoc, Refused
from shared import bus, rpc, subjects
from shared.commands import ModelsReply, ModelsRequest
from shared.config_state import ConfigState
from shared.events import OnboardProgress
from shared.ids import utcnow
from shared.onboarding import OnboardReply, OnboardRequest

LIST_TIMEOUT_S = 60.0


def view(doc: QueueDoc) -> OnboardReply:
    running = any(i.state == "running" for i in doc.items)
    return OnboardReply(running=running, stopping=doc.stopping, runner=doc.runner if running else "",
                        items=doc.items, issues=doc.issues)


def new_id() -> str:
    return f"o{uuid.uuid4().hex[:12]}"


class OnboardRpc:
    def __init__(self, nc: NATS, config: ConfigState, projection: bus.Projection, queue: OnboardQueue,
                 instance: str, wake: Callable[[], None]) -> None:
        self.nc, self.config, self.projection, self.queue = nc, config, projection, queue
        self.instance, self.wake = instance, wake

    async def serve(self, nc: NATS) -> rpc.Subscription:
        return await rpc.serve(nc, subjects.RPC_PROBER_ONBOARD, subjects.PROBER_QUEUE, OnboardRequest,
                               self.handle)

    async def handle(self, req: OnboardRequest) -> OnboardReply:
        if req.config_seq:
            await self.projection.wait_for(req.config_seq)
        try:
            if req.action == "queue":
                return await self.enqueue(req)
            if req.action == "candidates":
                return await self.candidates()
            return view(await self.change(req))
        except Refused as refused:
            raise rpc.RpcFailure(refused.status, "\n".join(refused.errors)) from None

    async def change(self, req: OnboardRequest) -> QueueDoc:
        def apply(doc: QueueDoc) -> tuple[QueueDoc, QueueDoc] | None:
            if req.action == "stop":
                new = rules.stop(doc, utcnow())
            elif req.action == "clear":
                new = rules.clear(doc)
            elif req.action == "dismiss":
                new = cands.dismiss(doc, req.keys, req.undo)
            else:
                return None
            return new, new

        return await self.queue.mutate(apply) or await self.queue.read()

    async def listings(self, endpoints: Iterable[str]) -> dict[str, Sequence[str] | str]:
        """Each endpoint's served ids, or why its listing failed (asked of any caller)."""
        found: dict[str, Sequence[str] | str] = {}
        for name in sorted(set(endpoints)):
            ep = self.config.endpoints.get(name)
            if ep is None:
                continue
            ask = ModelsRequest(endpoint=ep.name, base=ep.base, api=ep.api, headers=ep.headers)
            try:
                reply = await rpc.call(self.nc, subjects.RPC_CALLER_MODELS, ask, ModelsReply, LIST_TIMEOUT_S)
            except rpc.RpcFailure as failure:
                found[name] = failure.message
            else:
                found[name] = [m.id for m in reply.models]
        return found

    async def enqueue(self, req: OnboardRequest) -> OnboardReply:
        listings = await self.listings(a.endpoint for a in req.items)
        ids = [new_id() for _ in req.items]
        now = utcnow()

        def apply(doc: QueueDoc) -> tuple[QueueDoc, QueueDoc]:
            errors = rules.refusals(req.items, self.config, doc, listings)
            if errors:
                raise Refused(errors)
            new = rules.enqueue(doc, req.items, ids, now)
            return new, new

        doc = await self.queue.mutate(apply)
        assert doc is not None
        js = self.nc.jetstream()
        for item in doc.items:
            if item.id in ids:
                await bus.publish_event(js, OnboardProgress(
                    id=f"onboard:{item.id}:queued", by=self.instance, item=item.id, served=item.served,
                    endpoint=item.endpoint, mode=item.mode, state="queued", instance=self.instance,
                    remaining=rules.remaining(doc)))
        self.wake()
        return view(doc)

    async def candidates(self) -> OnboardReply:
        listings = await self.listings(self.config.endpoints)
        listed = {e: v for e, v in listings.items() if not isinstance(v, str)}
        errors = [f"{e}: {v}" for e, v in listings.items() if isinstance(v, str)]

        def remember(doc: QueueDoc) -> tuple[QueueDoc, QueueDoc]:
            return cands.seen(doc, listed), doc

        before = await self.queue.mutate(remember)
        assert before is not None
        shown, dismissed = cands.candidates(self.config, before, listed)
        return OnboardReply(candidates=shown, dismissed=dismissed, errors=errors)
