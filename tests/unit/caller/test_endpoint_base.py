"""A key goes only where its endpoint says: a call or a listing naming a base that is not the endpoint's
saved one (or an endpoint not saved) sends nothing; an endpoint not saved yet is listed where asked."""

from __future__ import annotations

import json

import httpx
import pytest
from structlog.testing import capture_logs

from services.caller.endpoint_base import (
    REFUSALS,
    REFUSED,
    base_refusal,
    is_base_refusal,
    listing_refusal,
    origin,
    same_base,
)
from services.caller.keys import KeyStore
from services.caller.models_rpc import ModelLister
from services.caller.outcome import client_failed
from services.caller.seat_events import cooldown_started
from services.caller.upstream import Upstream
from shared.commands import ModelsReply, ModelsRequest
from shared.config_state import ConfigState
from shared.events import EndpointRemoved, EndpointSaved
from shared.rpc import RpcFailure
from tests.unit.caller.test_paid_guard import NOW, CountingPacer
from tests.unit.caller.test_seat_events import seat_call

SAVED = "https://api.example.com/v1"
FOREIGN = "http://127.0.0.1:9/v1"
KEY = "sk-unit-5a5a5a"


def saved(base: str = SAVED) -> ConfigState:
    state = ConfigState()
    state.apply(EndpointSaved(id="cfg:groq", name="groq", base=base), 1)
    return state


def test_a_call_goes_only_to_its_endpoints_saved_base() -> None:
    assert base_refusal(saved(), "groq", SAVED) is None
    assert base_refusal(saved(), "groq", SAVED + "/") is None  # a trailing slash is the same base
    assert base_refusal(saved(SAVED + "/"), "groq", SAVED) is None
    assert base_refusal(saved(), "groq", FOREIGN) == f"{REFUSED}{FOREIGN} is not endpoint groq's saved base"
    assert base_refusal(saved(), "groq", "https://api.example.com/v2") is not None
    assert base_refusal(saved(), "groq", "https://API.example.com/v1") is not None  # compared as saved


def test_a_call_on_an_endpoint_not_saved_or_removed_goes_nowhere() -> None:
    assert base_refusal(ConfigState(), "groq", SAVED) == f"{REFUSED}{SAVED} is not endpoint groq's saved base"
    state = saved()
    state.apply(EndpointRemoved(id="cfg:gone", name="groq"), 2)
    assert base_refusal(state, "groq", SAVED) is not None


def test_a_saved_endpoint_is_listed_only_at_its_saved_base() -> None:
    assert listing_refusal(saved(), "groq", SAVED) is None
    assert listing_refusal(saved(), "groq", FOREIGN) == (
        f"refused: base {FOREIGN} is not endpoint groq's saved base"
    )
    assert listing_refusal(saved(), "groq", SAVED, "https://api.example.com:443/other/models") is None
    assert listing_refusal(saved(), "groq", SAVED, f"{FOREIGN}/models") == (
        f"refused: models_url {FOREIGN}/models is not on endpoint groq's base"
    )
    assert listing_refusal(saved(), "groq", SAVED, "https://api.example.com:bad/models") is not None


def test_an_endpoint_not_saved_yet_is_listed_where_asked() -> None:
    """How `bench endpoint add` checks a new endpoint before saving it."""
    assert listing_refusal(ConfigState(), "groq", FOREIGN) is None
    assert listing_refusal(saved(), "new-one", FOREIGN, f"{FOREIGN}/models") is None


def test_bases_compare_after_a_trailing_slash_and_origins_by_scheme_host_and_port() -> None:
    assert same_base("https://x/v1/", "https://x/v1") and not same_base("https://x/v1", "http://x/v1")
    assert origin("https://X.example/v1") == origin("https://x.example:443/m") == ("https", "x.example", 443)
    assert origin("http://x:8080/v1") == ("http", "x", 8080)
    assert origin("http://x:no/v1") is None


def test_a_refused_base_rests_nothing_whatever_its_words() -> None:
    """The base is the message's own: words like `429 rate limit` in it must not rest a model."""
    base = "http://127.0.0.1:9/429 rate limit, try again in 9h"
    error = client_failed(base_refusal(saved(), "groq", base) or "").error
    assert is_base_refusal(error) and not is_base_refusal("Error: client failed: missing key: set X")
    assert cooldown_started(seat_call(), error, NOW) is None


def test_a_long_base_is_cut_in_the_refusal() -> None:
    why = base_refusal(saved(), "groq", "https://x/" + "a" * 5000) or ""
    assert 200 < len(why) < 300


async def test_the_upstream_refuses_a_foreign_base_before_pacing_or_sending() -> None:
    pacer = CountingPacer(saved())
    upstream = Upstream(None, KeyStore(env={"BENCHWARMERS_KEY_GROQ": KEY}), pacer)  # type: ignore[arg-type]
    before = REFUSALS.count
    with capture_logs() as logs:
        report = await upstream.call(seat_call(base=FOREIGN))
        unsaved = await upstream.call(seat_call(endpoint="other", base=SAVED))
    assert report.outcome.error == (
        f"Error: client failed: refused: base {FOREIGN} is not endpoint groq's saved base"
    )
    assert unsaved.outcome.error.startswith("Error: client failed: refused: base ")
    assert (report.attempts, pacer.admitted) == (0, 0)
    assert REFUSALS.count == before + 2
    refused = [e for e in logs if e["event"] == "base_refused"]
    assert [(e["log_level"], e["endpoint"], e["base"], e["refusals"]) for e in refused] == [
        ("warning", "groq", FOREIGN, before + 1),
        ("warning", "other", SAVED, before + 2),
    ]
    assert KEY not in json.dumps(refused) + report.outcome.error
    assert upstream.refusal(seat_call(), KEY) is None  # its own base: it goes


class Recorded:
    """A provider's `/models` behind httpx's mock transport: records what was asked."""

    def __init__(self) -> None:
        self.asked: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.asked.append(request)
        return httpx.Response(200, json={"data": [{"id": "m1"}]})


@pytest.mark.parametrize(
    ("endpoint", "base", "models_url", "sent"),
    [
        ("groq", SAVED, "", True),
        ("groq", FOREIGN, "", False),
        ("groq", SAVED, f"{FOREIGN}/models", False),
        ("new-one", FOREIGN, "", True),
    ],
)
async def test_the_lister_sends_a_saved_endpoints_key_only_to_its_saved_base(
    endpoint: str, base: str, models_url: str, sent: bool
) -> None:
    provider = Recorded()
    keys = KeyStore(env={"BENCHWARMERS_KEY_GROQ": KEY, "BENCHWARMERS_KEY_NEW_ONE": KEY})
    async with httpx.AsyncClient(transport=httpx.MockTransport(provider)) as client:
        lister = ModelLister(client, keys, saved())
        ask = ModelsRequest(endpoint=endpoint, base=base, models_url=models_url)
        try:
            reply: ModelsReply | RpcFailure = await lister.handle(ask)
        except RpcFailure as failure:
            reply = failure
    assert (len(provider.asked) == 1) is sent
    if sent:
        assert isinstance(reply, ModelsReply) and [m.id for m in reply.models] == ["m1"]
        assert provider.asked[0].headers["authorization"] == f"Bearer {KEY}"
    else:
        assert isinstance(reply, RpcFailure) and reply.status == 400
        assert reply.message.startswith("Error: client failed: refused: ")
        assert KEY not in reply.message
