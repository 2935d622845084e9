"""Typed request/reply on the bus: one call, one way to serve, one error.

`call` sends a request model and returns the reply model, or raises `RpcFailure` with an HTTP-like status:
503 when nobody answers (after a short retry: a replica may be restarting), 504 when the answer is late,
and the server's own status when it refused. `serve` answers a subject in a queue group with a handler
from request model to reply model; a malformed request is a 400, an exception other than `RpcFailure` a
500. Every failure travels as `{"error": {"status", "message"}}` and nothing else.

`Bus` is the part of the NATS client this needs, so a unit test can stand in for the connection.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

import structlog
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError
from pydantic import BaseModel, ValidationError

log = structlog.get_logger("rpc")

# Waits before asking again when nobody answers: about a second in all, the time a replica takes to be
# back on the bus after a restart, and short enough for a stack that is really down to say so quickly.
NO_RESPONDERS_RETRY_S = (0.1, 0.3, 0.6)

# Past those, a patient asker asks again this often.
PATIENT_RETRY_S = 0.5

Request = TypeVar("Request", bound=BaseModel)
Reply = TypeVar("Reply", bound=BaseModel)


class Message(Protocol):
    """What a request, or the answer to one, carries."""

    @property
    def subject(self) -> str: ...

    @property
    def reply(self) -> str: ...

    @property
    def data(self) -> bytes: ...


class Subscription(Protocol):
    async def unsubscribe(self, limit: int = 0) -> None: ...


class Bus(Protocol):
    """Core NATS as the services use it; nats-py's `Client` is one."""

    async def publish(
        self, subject: str, payload: bytes = b"", reply: str = "", headers: dict[str, str] | None = None
    ) -> None: ...

    async def request(self, subject: str, payload: bytes = b"", timeout: float = 0.5) -> Message: ...

    async def subscribe(
        self, subject: str, queue: str = "", cb: Callable[[Message], Awaitable[None]] | None = None
    ) -> Subscription: ...


class RpcFailure(Exception):
    """A request that got no answer, a late one, or a refusal; `status` is HTTP-like. `answered` is False
    when nobody answered in time (503, 504): the asker words that itself, knowing who it asked."""

    def __init__(self, status: int, message: str, answered: bool = True) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message
        self.answered = answered


def failure_bytes(status: int, message: str) -> bytes:
    """The one wire shape of a failure."""
    return json.dumps({"error": {"status": status, "message": message}}).encode()


def failure_of(data: bytes) -> RpcFailure | None:
    """The failure a reply carries, if it is one (an object whose only field is the error)."""
    try:
        body = json.loads(data)
    except ValueError:
        return None
    if not isinstance(body, dict) or set(body) != {"error"} or not isinstance(body["error"], dict):
        return None
    error = body["error"]
    status = error.get("status")
    return RpcFailure(status if isinstance(status, int) else 500, str(error.get("message", "")))


async def call(
    bus: Bus, subject: str, request: BaseModel, reply_type: type[Reply], timeout: float = 10.0,
    retry_s: Sequence[float] = NO_RESPONDERS_RETRY_S, patience_s: float = 0.0,
) -> Reply:
    """Ask `subject` and return its answer as `reply_type`; every way this can fail is an `RpcFailure`.

    With `patience_s`, nobody answering (no responder, or a responder that died holding the request) is
    asked again until that much time has passed: a replica restarting, or its twin taking over, is not the
    client's problem. Only for requests that may be asked twice."""
    payload = request.model_dump_json(by_alias=True).encode()
    waits = list(retry_s)
    loop = asyncio.get_running_loop()
    give_up = loop.time() + patience_s
    while True:
        try:
            answer = await bus.request(subject, payload, timeout=timeout)
            break
        except NoRespondersError:
            if waits:
                await asyncio.sleep(waits.pop(0))
                continue
            if loop.time() + PATIENT_RETRY_S > give_up:
                raise RpcFailure(503, f"nobody answers on {subject}", answered=False) from None
            await asyncio.sleep(PATIENT_RETRY_S)
        except (TimeoutError, NatsTimeoutError):
            if loop.time() >= give_up:
                raise RpcFailure(504, f"no answer on {subject} within {timeout:g}s", answered=False) from None
    refused = failure_of(answer.data)
    if refused is not None:
        raise refused
    try:
        return reply_type.model_validate_json(answer.data)
    except ValidationError:
        raise RpcFailure(502, f"{subject} answered something that is not a {reply_type.__name__}") from None


def bad_request(exc: ValidationError) -> RpcFailure:
    """A 400 naming the first field at fault."""
    errors = exc.errors()
    if not errors:
        return RpcFailure(400, "invalid request")
    where = ".".join(str(p) for p in errors[0]["loc"]) or "body"
    return RpcFailure(400, f"{where}: {errors[0]['msg']}")


def service_of(subject: str) -> str:
    """`bench.rpc.<service>.<name>` -> `<service>`, for a message a user reads."""
    parts = subject.split(".")
    return parts[2] if len(parts) > 3 else subject


async def answer(
    subject: str, data: bytes, request_type: type[Request], handler: Callable[[Request], Awaitable[BaseModel]]
) -> bytes:
    """The reply to one request, as it goes on the wire (a failure included)."""
    try:
        # Strict: every request is another service's dump of the same model, so nothing needs coercing.
        request = request_type.model_validate_json(data or b"{}", strict=True)
    except ValidationError as exc:
        failed = bad_request(exc)
        return failure_bytes(failed.status, failed.message)
    try:
        reply = await handler(request)
    except RpcFailure as exc:
        failed = exc
    except Exception as exc:
        log.exception("rpc_failed", subject=subject)
        failed = RpcFailure(500, f"the {service_of(subject)} failed ({type(exc).__name__})")
    else:
        return reply.model_dump_json(by_alias=True).encode()
    return failure_bytes(failed.status, failed.message)


async def serve(
    bus: Bus, subject: str, queue: str, request_type: type[Request],
    handler: Callable[[Request], Awaitable[BaseModel]],
) -> Subscription:
    """Answer `subject` in the queue group `queue` (one member answers each request)."""

    async def on_msg(msg: Message) -> None:
        reply = await answer(subject, msg.data, request_type, handler)
        if msg.reply:
            await bus.publish(msg.reply, reply)

    return await bus.subscribe(subject, queue=queue, cb=on_msg)

