"""`shared.rpc` over an in-memory bus: a typed answer, the one error with its status (refusal, malformed
request, a handler's crash, nobody there, too late), and the retry when nobody answers at first."""

from __future__ import annotations

import asyncio

import pytest
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from pydantic import BaseModel, ConfigDict

from shared import rpc
from tests.unit.fake_bus import FakeBus

SUBJECT = "bench.rpc.thing.ask"


class Ask(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int


class Answer(BaseModel):
    double: int


async def double(ask: Ask) -> Answer:
    if ask.n < 0:
        raise rpc.RpcFailure(404, f"no {ask.n}")
    if ask.n == 13:
        raise KeyError("unlucky")
    return Answer(double=2 * ask.n)


async def served() -> FakeBus:
    bus = FakeBus()
    await rpc.serve(bus, SUBJECT, "things", Ask, double)
    return bus


async def failure(bus: FakeBus, request: BaseModel, timeout: float = 1.0) -> rpc.RpcFailure:
    with pytest.raises(rpc.RpcFailure) as caught:
        await rpc.call(bus, SUBJECT, request, Answer, timeout, retry_s=(0.0, 0.0))
    return caught.value


async def test_a_typed_question_gets_a_typed_answer() -> None:
    assert await rpc.call(await served(), SUBJECT, Ask(n=21), Answer) == Answer(double=42)


async def test_a_refusal_keeps_its_status_and_message() -> None:
    refused = await failure(await served(), Ask(n=-1))
    assert (refused.status, refused.message, refused.answered) == (404, "no -1", True)


async def test_a_handler_that_crashes_is_a_500_naming_the_service() -> None:
    crashed = await failure(await served(), Ask(n=13))
    assert (crashed.status, crashed.message) == (500, "the thing failed (KeyError)")


async def test_a_malformed_request_is_a_400_naming_the_field() -> None:
    class Wrong(BaseModel):
        n: str

    malformed = await failure(await served(), Wrong(n="21"))  # strict: no string for an int
    assert malformed.status == 400 and malformed.message.startswith("n: ")


async def test_an_answer_of_another_shape_is_a_502() -> None:
    odd = await failure(FakeBus(b'{"something": "else"}'), Ask(n=1))
    assert odd.status == 502 and "Answer" in odd.message


async def test_nobody_there_is_a_503_after_the_retries() -> None:
    bus = FakeBus()
    nobody = await failure(bus, Ask(n=1))
    assert (nobody.status, nobody.answered) == (503, False)
    assert len(bus.asked) == 3  # the first question and both retries


async def test_a_replica_back_within_the_retry_is_answered() -> None:
    bus = FakeBus(NoRespondersError(), NoRespondersError())
    await rpc.serve(bus, SUBJECT, "things", Ask, double)
    assert await rpc.call(bus, SUBJECT, Ask(n=2), Answer, retry_s=(0.0, 0.0)) == Answer(double=4)
    assert len(bus.asked) == 3


async def test_a_late_answer_is_a_504() -> None:
    bus = FakeBus()

    async def slow(ask: Ask) -> Answer:
        await asyncio.sleep(3600)
        return Answer(double=0)

    await rpc.serve(bus, SUBJECT, "things", Ask, slow)
    late = await failure(bus, Ask(n=1), timeout=0.05)
    assert (late.status, late.answered) == (504, False)


def test_only_an_object_holding_just_the_error_is_a_failure() -> None:
    assert rpc.failure_of(rpc.failure_bytes(409, "taken")) is not None
    assert rpc.failure_of(b'{"rows": [], "error": {"status": 400, "message": "x"}}') is None
    assert rpc.failure_of(b"not json") is None



async def test_a_patient_call_waits_for_a_responder_to_come_back() -> None:
    bus = FakeBus()

    async def late_start() -> None:
        await asyncio.sleep(1.5)  # longer than the short retry: only patience bridges it
        await rpc.serve(bus, SUBJECT, "things", Ask, double)

    starting = asyncio.create_task(late_start())
    reply = await rpc.call(bus, SUBJECT, Ask(n=2), Answer, timeout=1.0, retry_s=(0.1,), patience_s=5.0)
    await starting
    assert reply.double == 4


async def test_without_patience_nobody_answering_is_a_503_soon() -> None:
    refused = await failure(FakeBus(), Ask(n=2))
    assert refused.status == 503 and not refused.answered


async def test_a_patient_call_asks_again_after_a_responder_died_holding_it() -> None:
    bus = FakeBus(NatsTimeoutError())  # the first request is held by a replica that died
    await rpc.serve(bus, SUBJECT, "things", Ask, double)
    reply = await rpc.call(bus, SUBJECT, Ask(n=5), Answer, timeout=1.0, patience_s=5.0)
    assert reply.double == 10 and len(bus.asked) == 2
