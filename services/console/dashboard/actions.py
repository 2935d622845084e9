"""What each dashboard form does: its body goes through the admin API's own schema and handler (so its
rules, its events and its refusals are the API's), or, for a verdict and a first ask, through the same
checks the gateway routes use. The answer is an `Outcome` the route renders."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request

from services.console.admin.onboard_schemas import DismissBody, OnboardBody, OnboardQueueBody
from services.console.admin.schemas import (
    AliasBody,
    CatalogRefreshBody,
    CollectionBody,
    CollectionName,
    ConnectionLimitsBody,
    EndpointBody,
    EndpointName,
    KeyCreateBody,
    KeyName,
    ModelFactsBody,
    ModelRegisterBody,
    RetireBody,
    SchedulerBody,
    SettingsBody,
)
from services.console.context import context
from services.console.dashboard import bench_views, forms, views
from services.console.routes import (
    admin_catalog,
    admin_config,
    admin_endpoints,
    admin_keys,
    admin_models,
    admin_onboard,
)
from shared import subjects
from shared.access import caller_of
from shared.commands import VerdictReply
from shared.config_rules import base as rules
from shared.config_writer import WriteConflict
from shared.ledger_api import verdict_request
from shared.onboarding import MAX_BATCH
from shared.refusal import Refusal

STALE = "This page is out of date: {why}. Reload it to see the bench as it is now."


@dataclass
class Outcome:
    """`refresh`: the page reloads to show the new state; else `shown` is a result to show in place."""

    refresh: bool = False
    shown: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)
    status: int = 200


Handler = Callable[[Request, dict[str, Any]], Awaitable[Outcome]]


async def endpoint(request: Request, body: dict[str, Any]) -> Outcome:
    reply: dict[str, Any] = await admin_endpoints.save_endpoint(EndpointBody.model_validate(body), request)
    if body.get("test"):
        return Outcome(shown={"title": f"{body.get('name')} tested (nothing saved)",
                              "lines": [reply["listing"]["note"]]})
    return Outcome(refresh=True)


async def endpoint_test(request: Request, body: dict[str, Any]) -> Outcome:
    reply: dict[str, Any] = await admin_endpoints.test_endpoint(EndpointName.model_validate(body), request)
    key_set = views.secret_state(reply["endpoint"]["key_set"])
    return Outcome(shown={"title": f"{body.get('name')} tested",
                          "lines": [reply["listing"]["note"], f"key: {key_set}"]})


async def model(request: Request, body: dict[str, Any]) -> Outcome:
    await admin_models.register(ModelRegisterBody.model_validate(body), request)
    return Outcome(refresh=True)


async def collection(request: Request, body: dict[str, Any]) -> Outcome:
    await admin_config.save_collection(CollectionBody.model_validate(body), request)
    return Outcome(refresh=True)


async def collection_remove(request: Request, body: dict[str, Any]) -> Outcome:
    await admin_config.remove_collection(CollectionName.model_validate(body), request)
    return Outcome(refresh=True)


async def retry(request: Request, body: dict[str, Any]) -> Outcome:
    reply = await admin_models.retry(AliasBody.model_validate(body), request)
    how = "answered" if reply["answered"] else f"did not answer ({reply['failure']}) {reply['error']}".strip()
    cleared = " Its alert is cleared." if reply["cleared"] else ""
    return Outcome(shown={"title": f"Retry of {reply['alias']}", "lines": [f"It {how}.{cleared}"]})


async def retire(request: Request, body: dict[str, Any]) -> Outcome:
    await admin_models.retire(RetireBody.model_validate(body), request)
    return Outcome(refresh=True)


async def restore(request: Request, body: dict[str, Any]) -> Outcome:
    await admin_models.restore(AliasBody.model_validate(body), request)
    return Outcome(refresh=True)


async def key(request: Request, body: dict[str, Any]) -> Outcome:
    reply = await admin_keys.create(KeyCreateBody.model_validate(body), request)
    return Outcome(shown={"title": f"Gateway key {reply['name']} made", "secret": reply["key"],
                          "lines": ["Copy it now: it is shown this once, and only its hash is kept."]})


async def key_revoke(request: Request, body: dict[str, Any]) -> Outcome:
    await admin_keys.revoke(KeyName.model_validate(body), request)
    return Outcome(refresh=True)


async def limits(request: Request, body: dict[str, Any]) -> Outcome:
    name = body.pop("connection", None)
    await admin_config.save_connection_limits(
        ConnectionLimitsBody.model_validate({"connection": name, "limits": body}), request)
    return Outcome(refresh=True)


async def scheduler(request: Request, body: dict[str, Any]) -> Outcome:
    await admin_config.save_scheduler(SchedulerBody.model_validate(body), request)
    return Outcome(refresh=True)


async def settings(request: Request, body: dict[str, Any]) -> Outcome:
    await admin_config.save_settings(SettingsBody.model_validate(body), request)
    return Outcome(refresh=True)


async def verdict(request: Request, body: dict[str, Any]) -> Outcome:
    """H-D3 /api/verdict: the gateway's own verdict checks, then the ledger records it."""
    if "useful" not in body:
        return Outcome(errors={"useful": ["say whether the answer was useful"]}, status=400)
    asked = verdict_request(body, caller_of(request).name)
    await context(request).ask_ledger(subjects.RPC_LEDGER_VERDICT, asked, VerdictReply)
    return Outcome(refresh=True)


async def ask(request: Request, body: dict[str, Any]) -> Outcome:
    """The first-run guide's last step: one panel of every member, as `bench/<name>:all` over OpenAI chat."""
    errors = {name: ["required"] for name in ("collection", "prompt") if not body.get(name)}
    if errors:
        return Outcome(errors=errors, status=400)
    name = rules.strip_bench(str(body["collection"]))
    done = await context(request).panels.ask_panel(name, str(body["prompt"]), caller_of(request).name)
    return Outcome(shown={"title": f"Panel {done.panel}", "lines": [
        f"{done.answered} of {done.seats} seats answered. See them under Collections, where each is owed "
        "your verdict."]})


async def queued(request: Request, items: list[OnboardBody]) -> Outcome:
    """O-3 through the admin API's own route; the page's queue follows the progress live."""
    await admin_onboard.queue(OnboardQueueBody(items=items), request)
    where = sorted({i.endpoint for i in items})
    return Outcome(shown={"title": f"Queued {len(items)} for onboarding", "lines": [
        f"{', '.join(i.served for i in items)} on {', '.join(where)}.",
        "Their progress shows in the queue as it happens."]})


async def onboard(request: Request, body: dict[str, Any]) -> Outcome:
    served = body.get("served") or []
    if not served:
        return Outcome(errors={"served": ["give a served id (or several)"]}, status=400)
    if len(served) > MAX_BATCH:
        return Outcome(errors={"served": [f"at most {MAX_BATCH} at once (got {len(served)})"]}, status=400)
    mode = body.get("mode") or "full"
    items = [OnboardBody.model_validate({"served": s, "endpoint": body.get("endpoint", ""), "mode": mode})
             for s in served]
    return await queued(request, items)


async def onboard_stop(request: Request, body: dict[str, Any]) -> Outcome:
    await admin_onboard.stop(request)
    return Outcome(refresh=True)


async def onboard_clear(request: Request, body: dict[str, Any]) -> Outcome:
    await admin_onboard.clear(request)
    return Outcome(refresh=True)


async def dismiss(request: Request, body: dict[str, Any]) -> Outcome:
    await admin_onboard.dismiss(DismissBody.model_validate(body), request)
    return Outcome(refresh=True)


async def discover_add(request: Request, body: dict[str, Any]) -> Outcome:
    """CAT-5 (direct route): the row as Discover shows it now, onboarded on an endpoint that reaches it."""
    provider, model_id = body.get("provider"), body.get("model")
    listed = (await admin_catalog.discover_list(request))["rows"]
    row = next((r.model_dump(mode="json") for r in listed if (r.provider, r.model) == (provider, model_id)),
               None)
    if row is None:
        raise rules.Invalid([STALE.format(why=f"{model_id} of {provider} is not in Discover any more")])
    endpoint, why = bench_views.add_route(row, str(body.get("endpoint") or ""))
    if endpoint is None:
        raise rules.Invalid([why])
    mode = body.get("mode") or "full"
    return await queued(request, [OnboardBody.model_validate({"served": model_id, "endpoint": endpoint,
                                                              "mode": mode})])


async def catalog_refresh(request: Request, body: dict[str, Any]) -> Outcome:
    await admin_catalog.refresh(CatalogRefreshBody(force=True), request)
    return Outcome(refresh=True)


async def facts(request: Request, body: dict[str, Any]) -> Outcome:
    """C-15: the user's own facts; a price needs both sides."""
    cost = [body.pop(side, None) for side in ("cost_input", "cost_output")]
    if any(c is not None for c in cost):
        if None in cost:
            return Outcome(errors={"cost_input": ["give both prices (input and output), or neither"]},
                           status=400)
        body["cost"] = {"input": cost[0], "output": cost[1]}
    await admin_models.set_facts(ModelFactsBody.model_validate(body), request)
    return Outcome(refresh=True)


async def facts_clear(request: Request, body: dict[str, Any]) -> Outcome:
    sent = {"alias": body.get("alias"), "clear": [body.get("fact")]}
    await admin_models.set_facts(ModelFactsBody.model_validate(sent), request)
    return Outcome(refresh=True)


HANDLERS: dict[str, Handler] = {
    "endpoint": endpoint, "endpoint-test": endpoint_test, "model": model, "collection": collection,
    "collection-remove": collection_remove, "ask": ask, "verdict": verdict, "retry": retry, "retire": retire,
    "restore": restore, "key": key, "key-revoke": key_revoke, "limits": limits, "scheduler": scheduler,
    "settings": settings, "onboard": onboard, "onboard-stop": onboard_stop, "onboard-clear": onboard_clear,
    "dismiss": dismiss, "discover-add": discover_add, "catalog-refresh": catalog_refresh, "facts": facts,
    "facts-clear": facts_clear,
}


async def run(request: Request, form: forms.Form, sent: dict[str, Any]) -> Outcome:
    """Fill the form, ask its handler; every refusal beside its field, a stale page told so."""
    filled = forms.fill(form, sent)
    if not filled.ok:
        return Outcome(errors=filled.errors, status=400)
    try:
        return await HANDLERS[form.action](request, filled.body)
    except ValidationError as invalid:
        return Outcome(errors=forms.on_fields(form, forms.pydantic_errors(invalid.errors())), status=400)
    except rules.Invalid as invalid:
        return refused(form, invalid.status, invalid.errors)
    except Refusal as refusal:
        return refused(form, refusal.status, [refusal.message])
    except WriteConflict as conflict:
        return refused(form, 409, [str(conflict)])


def refused(form: forms.Form, status: int, errors: list[str]) -> Outcome:
    # what the page acted on is gone (another tab, another admin, another replica)
    if status == 404 and form.stale_when_missing:
        return Outcome(errors={forms.FORM_LEVEL: [STALE.format(why="; ".join(errors))]}, status=404)
    return Outcome(errors=forms.place(form, errors), status=status)
