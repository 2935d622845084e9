"""What every admin API route shares: a route class that turns each failure into `{"ok": false, "errors":
[...]}` with its status (a body that does not fit its schema is a 400 like any other refusal), and the
one way to write: validate against the folded configuration, publish one event signed by the caller."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from services.console.context import context
from shared.access import caller_of
from shared.config_rules import base as rules
from shared.config_state import ConfigState
from shared.config_writer import WriteConflict
from shared.events import ConfigEvent
from shared.refusal import Refusal


def refused(status: int, errors: list[str]) -> JSONResponse:
    return JSONResponse({"ok": False, "errors": errors}, status_code=status)


def validation_errors(errors: Sequence[Any]) -> list[str]:
    """Pydantic's complaints in the API's words; the values sent are never echoed (one may be a secret)."""
    out: list[str] = []
    unknown: list[str] = []
    for error in errors:
        kind = error.get("type", "")
        loc = [str(part) for part in error.get("loc", ()) if part != "body"]
        if kind == "json_invalid":
            out.append("body is not JSON")
        elif not loc and kind in ("missing", "model_attributes_type", "dict_type", "model_type"):
            out.append("body must be a JSON object")
        elif kind == "extra_forbidden":
            unknown.append(".".join(loc))
        else:
            out.append(f'"{".".join(loc)}": {error.get("msg", "is not valid")}')
    if unknown:
        out.append(f"unknown field(s): {', '.join(sorted(unknown))}")
    return list(dict.fromkeys(out)) or ["the body does not fit this route's schema"]


class AdminRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answered(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as exc:
                return refused(400, validation_errors(exc.errors()))
            except HTTPException as exc:  # FastAPI's own, e.g. a body that is not even text
                why = "body is not JSON" if exc.status_code == 400 else str(exc.detail)
                return refused(exc.status_code, [why])
            except rules.Invalid as invalid:
                return refused(invalid.status, invalid.errors)
            except Refusal as refusal:
                return refused(refusal.status, [refusal.message])
            except WriteConflict as conflict:
                return refused(409, [str(conflict)])

        return answered


def signed(rule: rules.Rule, by: str) -> rules.Rule:
    """C-17: the change log says who wrote each change."""

    def rule_by(state: ConfigState, event_id: str) -> ConfigEvent:
        return rule(state, event_id).model_copy(update={"by": by})

    return rule_by


async def write(request: Request, rule: rules.Rule) -> ConfigEvent:
    """Validate and publish one config event; raises `rules.Invalid` (every reason) or `WriteConflict`."""
    return await context(request).writer.write(signed(rule, caller_of(request).name))


def sent(body: Any) -> dict[str, Any]:
    """The fields the client sent, as the rules read them (SecretStr values stay hidden)."""
    data: dict[str, Any] = body.model_dump(exclude_unset=True)
    return data
