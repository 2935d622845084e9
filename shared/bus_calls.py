"""The gateway's questions to the other services, and the one place where their failures become the HTTP
refusals a client reads: nobody answering is a 503 that says which service to start, a late answer a 503
that says to try again, and a service's own refusal keeps its status and message."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

from shared import rpc, subjects
from shared.refusal import Refusal

Reply = TypeVar("Reply", bound=BaseModel)

ABSENT = {
    subjects.RPC_SEATER_PLAN: "no seater is running, so no panel can be seated; start the stack",
    subjects.RPC_SEATER_ROUTE: "no seater is running, so no route turn can be seated; start the stack",
    subjects.RPC_CALLER_MODELS: ("no caller is running to list the endpoint's models; start the stack "
                                 "(nothing was saved)"),
    subjects.RPC_PROBER_SUITE: "no prober is running, so no suite pass can run; start the stack",
    subjects.RPC_PROBER_CATALOG: ("no prober is running, so the catalog cannot be refreshed; start the stack "
                                  "(the facts stay as they are)"),
}
LATE = {
    subjects.RPC_CALLER_MODELS: "no caller listed the endpoint's models within {s:g}s (nothing was saved)",
}


def refusal(subject: str, failure: rpc.RpcFailure, timeout_s: float) -> Refusal:
    if failure.answered:
        return Refusal(failure.status, failure.message)
    service = rpc.service_of(subject)
    if failure.status == 503:
        return Refusal(503, ABSENT.get(subject, f"the {service} is not running; start the stack"))
    late = LATE.get(subject, "the {service} did not answer within {s:g}s; try again")
    return Refusal(503, late.format(service=service, s=timeout_s))


async def ask(
    bus: rpc.Bus, subject: str, request: BaseModel, reply_type: type[Reply], timeout_s: float,
    patience_s: float = 0.0,
) -> Reply:
    """`rpc.call`, its failures as `Refusal`s."""
    try:
        return await rpc.call(bus, subject, request, reply_type, timeout_s, patience_s=patience_s)
    except rpc.RpcFailure as failure:
        raise refusal(subject, failure, timeout_s) from None
