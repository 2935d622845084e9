"""A key goes only where its endpoint says, in a real caller process on a real NATS: a listing, a seat call or
a route call naming a saved endpoint with another base (a listener of whoever published it) sends nothing
there, nor to the endpoint itself; the same messages at the saved base go through."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import nats.errors
import pytest

from services.gateway.route_mode.relay import RelayHub
from shared import bus, bus_access, rpc, subjects
from shared.commands import ModelsReply, ModelsRequest, RelayFrame, RouteCall
from shared.natsserver import NatsServer
from tests.fakes.provider import FakeProvider
from tests.integration.caller.conftest import CallerProcess
from tests.integration.caller.test_caller_service import KEY, caller_env, completion_of, seat_call, send

REFUSED = "Error: client failed: refused: base "


@pytest.fixture(scope="module")
def foreign(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeProvider]:
    """A listener that records whatever reaches it: the base a message names instead of the saved one."""
    log_path: Path = tmp_path_factory.mktemp("foreign") / "foreign.log"
    fp = FakeProvider(log_path=log_path).start()
    try:
        yield fp
    finally:
        fp.stop()


async def listing(nc: bus.NATS, **fields: str) -> ModelsReply | rpc.RpcFailure:
    try:
        ask = ModelsRequest.model_validate(fields)
        return await rpc.call(nc, subjects.RPC_CALLER_MODELS, ask, ModelsReply)
    except rpc.RpcFailure as failure:
        return failure


def refusals(caller: CallerProcess) -> list[tuple[str, str, int]]:
    return [(e["endpoint"], e["base"], e["refusals"]) for e in caller.log_events()
            if e.get("event") == "base_refused" and e.get("level") == "warning"]


def sent_to(provider: FakeProvider, served: str) -> int:
    return sum(1 for r in provider.requests() if r["body"].get("model") == served)


async def test_a_saved_endpoint_is_listed_only_at_its_saved_base(
    nc: bus.NATS, provider: FakeProvider, foreign: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    caller = callers(caller_env())
    foreign.reset_requests()
    elsewhere = await listing(nc, endpoint="fake", base=foreign.base_url)
    assert isinstance(elsewhere, rpc.RpcFailure) and elsewhere.status == 400
    assert elsewhere.message == f"{REFUSED}{foreign.base_url} is not endpoint fake's saved base"
    on_another_url = await listing(nc, endpoint="fake", base=provider.base_url,
                                   models_url=f"{foreign.base_url}/models")
    assert isinstance(on_another_url, rpc.RpcFailure) and on_another_url.status == 400
    assert foreign.requests() == []  # the exploit sent nothing, not even without the key

    provider.set_model("eb-listed")
    at_home = await listing(nc, endpoint="fake", base=provider.base_url + "/")  # a trailing "/" is the same
    assert isinstance(at_home, ModelsReply) and "eb-listed" in [m.id for m in at_home.models]
    assert [r["headers"]["authorization"] for r in provider.requests() if r["path"] == "/v1/models"][-1:] == [
        f"Bearer {KEY}"
    ]
    assert refusals(caller) == [("fake", foreign.base_url, 1), ("fake", provider.base_url, 2)]
    assert KEY not in elsewhere.message + on_another_url.message + caller.log()


async def test_an_endpoint_not_saved_yet_is_listed_where_the_gateway_asks(
    nc: bus.NATS, foreign: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    """How `bench endpoint add` checks a new endpoint before it saves it."""
    callers(caller_env())
    foreign.set_model("eb-new-endpoint")
    fresh = await listing(nc, endpoint="fresh", base=foreign.base_url)
    assert isinstance(fresh, ModelsReply) and "eb-new-endpoint" in [m.id for m in fresh.models]


async def test_a_seat_call_naming_a_foreign_base_is_refused_and_sends_nothing(
    nc: bus.NATS, provider: FakeProvider, foreign: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    caller = callers(caller_env())
    foreign.reset_requests()
    stolen = seat_call(provider, "eb-stolen", seat="member1", base=foreign.base_url)
    ghost = seat_call(provider, "eb-ghost", seat="member2", endpoint="ghost")  # an endpoint never saved
    await send(nc, stolen)
    await send(nc, ghost)
    refused, unsaved = await completion_of(nc, stolen), await completion_of(nc, ghost)
    assert (refused.status, refused.attempts, refused.http_status) == ("error", 0, None)
    assert refused.error == f"{REFUSED}{foreign.base_url} is not endpoint fake's saved base"
    assert unsaved.status == "error" and unsaved.error.startswith(f"{REFUSED}{provider.base_url}")
    assert foreign.requests() == [] and sent_to(provider, "eb-stolen") == sent_to(provider, "eb-ghost") == 0
    logged = refusals(caller)  # once each, counted in whichever order the two ran
    assert sorted((e, b) for e, b, _ in logged) == [("fake", foreign.base_url), ("ghost", provider.base_url)]
    assert sorted(n for _, _, n in logged) == [1, 2]
    assert KEY not in refused.error + caller.log()


async def test_a_seat_call_at_its_saved_base_still_goes(
    nc: bus.NATS, provider: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    caller = callers(caller_env())
    call = seat_call(provider, "eb-ok")
    await send(nc, call)
    event = await completion_of(nc, call)
    assert (event.status, event.answer, event.attempts) == ("ok", "eb-ok says: Say hello", 1)
    [sent] = [r for r in provider.requests() if r["body"].get("model") == "eb-ok"]
    assert sent["headers"]["authorization"] == f"Bearer {KEY}"
    assert refusals(caller) == []


async def test_a_route_call_naming_a_foreign_base_fails_and_sends_nothing(
    nc: bus.NATS, provider: FakeProvider, foreign: FakeProvider, callers: Callable[..., CallerProcess]
) -> None:
    caller = callers(caller_env())
    foreign.reset_requests()
    hub = RelayHub(nc, "test-gateway")
    relay = await hub.open()
    conv = "r20261202-000000-eb01"
    call = RouteCall(call=f"{conv}.t1.1", conversation=conv, turn=1, alias="eb-route", served="eb-route",
                     endpoint="fake", base=foreign.base_url, connection="fake", collection="code",
                     body={"messages": [{"role": "user", "content": "hi"}]}, relay=relay.relay,
                     first_piece_s=30, deadline=time.time() + 60)
    try:
        assert await relay.ask(call) == ""  # accepted, then failed without a request
        frame = await relay.next(20)
        while isinstance(frame, RelayFrame) and frame.kind == "beat":
            frame = await relay.next(20)
    finally:
        relay.close()
        await hub.close()
    assert isinstance(frame, RelayFrame) and frame.kind == "fail" and frame.outcome is not None
    assert frame.outcome.error == f"{REFUSED}{foreign.base_url} is not endpoint fake's saved base"
    assert frame.outcome.attempts == 0
    assert foreign.requests() == [] and sent_to(provider, "eb-route") == 0
    assert refusals(caller) == [("fake", foreign.base_url, 1)]


@pytest.mark.parametrize("role", [*bus_access.SERVICES, bus_access.ADMIN])
async def test_the_listing_exploit_reaches_no_foreign_listener_whoever_asks(
    nats_server: NatsServer, foreign: FakeProvider, callers: Callable[..., CallerProcess], role: str
) -> None:
    """Issue 13's exploit, asked with every role's own credentials: the server refuses every role but the
    gateway and the prober (and the operator), and the caller refuses those for a saved endpoint's key."""
    callers(caller_env())
    foreign.reset_requests()
    asker = await bus.connect(nats_server.url, f"test-{role}", nats_server.login(role))
    try:
        ask = ModelsRequest(endpoint="fake", base=foreign.base_url).model_dump_json().encode()
        if role in (bus_access.ADMIN, "gateway", "prober"):
            refused = rpc.failure_of((await asker.request(subjects.RPC_CALLER_MODELS, ask, timeout=10)).data)
            assert refused is not None and refused.status == 400
        else:
            with pytest.raises(nats.errors.TimeoutError):  # the server dropped the request: never delivered
                await asker.request(subjects.RPC_CALLER_MODELS, ask, timeout=1)
    finally:
        await asker.close()
    assert foreign.requests() == []
