"""The dashboard's routes (SPEC H-D4): thin handlers that read (`reads`), shape (`views`) and render
(`pages`). Behind the same guard as the admin API: the admin token's login cookie when a token is set.
Forms post JSON to `/ui/do/<form>`, which runs the admin API's own handler (`actions`)."""

from __future__ import annotations

import json
import platform
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse

from services.console.admin import more_views
from services.console.admin import views as config_views
from services.console.context import context
from services.console.dashboard import actions, bench_views, forms, reads, views
from services.console.dashboard.live import Live
from services.console.dashboard.pages import fragment, page, static
from services.console.routes import admin_catalog, admin_config, admin_keys
from services.console.routes.admin_models import feeds, last_probes
from shared import subjects
from shared.commands import QuotaReply, QuotaRequest, UsageReply, UsageRequest
from shared.config_rules import base as rules
from shared.config_rules import facts as fact_rules
from shared.config_rules import scheduler as scheduler_rules
from shared.config_state import ConfigState
from shared.version import package_version

PANELS_SHOWN = 30  # P-17
NOT_PAGES = ("/ui/static/", "/ui/live", "/ui/seat", "/ui/do/")


def choices(state: ConfigState) -> dict[str, Any]:
    chat = sorted(a for a, m in state.models.items() if m.role not in rules.NOT_CHAT_ROLES)
    return {"endpoints": [(n, n) for n in sorted(state.endpoints)], "aliases": chat,
            "collections": [(n, n) for n in sorted(state.collections)], "modes": list(bench_views.MODES)}


async def models_of(request: Request) -> list[dict[str, Any]]:
    state = context(request).config
    resting = (await feeds(request).resting()).until
    rows = more_views.models(state, resting, datetime.now(UTC), await last_probes(request))
    costs = {alias: facts.cost.model_dump() if facts and facts.cost else None
             for alias, facts in ((row["alias"], state.facts_of(row["alias"])) for row in rows)}
    return [{**row, "price": views.price_of(costs[row["alias"]], str(row["served"]))} for row in rows]


def live_hub(request: Request) -> Live:
    hub = getattr(request.app.state, "live", None)
    if hub is None:
        hub = Live(context(request).js)
        request.app.state.live = hub
    return hub


async def stream_position(request: Request) -> None:
    """A page carries where the event stream stood before it was read (`data-seq`), so its live feed, once
    connected, catches up on what happened in between (a progress event of a fast onboarding, say)."""
    if request.method == "GET" and not request.url.path.startswith(NOT_PAGES):
        request.state.seq = await live_hub(request).position()


router = APIRouter(include_in_schema=False, dependencies=[Depends(stream_position)])


@router.get("/")
async def glance(request: Request) -> HTMLResponse:
    state = context(request).config
    notes = reads.Notes()
    models = await models_of(request)
    filters = views.Filters.of(request.query_params)
    verdicts = await notes.get("useful/judged", reads.verdict_stats(request), {})
    suite = await notes.get("suite scores", reads.suite_scores(request), {})
    panels = await notes.get("panels", reads.panel_count(request), 0)
    chat = sum(1 for m in state.models.values() if m.role not in rules.NOT_CHAT_ROLES)
    guide = views.first_run(len(state.endpoints), chat, len(state.collections), panels)
    return page(request, "glance.html", "At a glance", notes=notes.items, guide=guide,
                guide_done=all(step.done for step in guide), choices=choices(state),
                actions=views.action_needed(more_views.alerts(state), models, datetime.now(UTC)),
                rows=views.glance_rows(models, verdicts, suite, filters), any_models=bool(models),
                filters=filters, options=views.filter_options(models))


@router.get("/ui/collections")
async def collections(request: Request) -> HTMLResponse:
    state = context(request).config
    notes = reads.Notes()
    rows, pending = await notes.get("recent panels", reads.recent_panels(request, PANELS_SHOWN), ([], []))
    recent = views.panels(rows, pending)
    listed = [config_views.collection_view(state.collections[n], state) for n in sorted(state.collections)]
    return page(request, "collections.html", "Collections", notes=notes.items, panels=recent,
                owed=views.owed_seats(recent), collections=listed, choices=choices(state))


@router.get("/ui/seat")
async def seat(request: Request, call: str = "") -> HTMLResponse:
    """The verdict dialog's content: the seat's answer, its question and a verdict form."""
    found = await reads.seat(request, call)
    if found is None:
        return fragment("missing_seat.html", status=404, call=call)
    return fragment("seat.html", seat=found)


@router.get("/ui/usage")
async def usage(request: Request) -> HTMLResponse:
    notes = reads.Notes()
    ctx = context(request)
    calls = await notes.get("calls", ctx.ask_ledger(subjects.RPC_LEDGER_USAGE, UsageRequest(limit=1000),
                                                    UsageReply), UsageReply())
    quota = await notes.get("quotas", ctx.ask_ledger(subjects.RPC_LEDGER_QUOTA, QuotaRequest(), QuotaReply),
                            None)
    data = quota.model_dump() if quota else {}
    rows = [line.model_dump() for line in calls.rows]
    return page(request, "usage.html", "Usage and quotas", notes=notes.items, calls=len(rows),
                plots=views.usage_plots(rows), burn=views.quota_burn(data), sent=data.get("sent", []),
                resting=data.get("resting", []), limits=data.get("limits", {"user": [], "learned": []}))


@router.get("/ui/logs")
async def logs(request: Request) -> HTMLResponse:
    notes = reads.Notes()
    ctx = context(request)
    calls = await notes.get("calls", ctx.ask_ledger(subjects.RPC_LEDGER_USAGE, UsageRequest(limit=200),
                                                    UsageReply), UsageReply())
    changes = (await feeds(request).changes(ctx.config.seq)).newest(200)
    runs = await notes.get("scheduler", reads.sql(request, reads.JOB_RUNS), [])
    queue = await notes.get("onboarding", reads.onboard_queue(request), None)
    return page(request, "logs.html", "Logs", notes=notes.items, calls=calls.rows, changes=changes, runs=runs,
                onboarded=bench_views.queue_rows(queue["items"]) if queue else [],
                issues=queue["issues"] if queue else [])


@router.get("/ui/endpoints")
async def endpoints(request: Request) -> HTMLResponse:
    state = context(request).config
    eps = [{**config_views.endpoint_view(ep, state), "key_state": "unknown until tested"}
           for ep in state.endpoints.values()]
    conns = [{**c, "form": {"connection": c["name"], **{k: v for k, v in c["limits"].items() if v}}}
             for c in more_views.connections(state)["connections"]]
    return page(request, "endpoints.html", "Endpoints", endpoints=eps, connections=conns,
                choices=choices(state))


@router.get("/ui/models")
async def models(request: Request) -> HTMLResponse:
    state = context(request).config
    limits = {row["alias"]: row["limits"] for row in more_views.connections(state)["models"]}
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    await feeds(request).resting()  # folds the context windows providers stated, as /api/model/facts does
    for alias, model in sorted(state.models.items()):
        shown = ", ".join(f"{k} {v}" for k, v in limits.get(alias, {}).items() if v)
        facts = bench_views.fact_rows(fact_rules.facts_view(alias, state)["facts"])
        grouped[state.connection_of(alias)].append({**config_views.fields(model), "limits": shown,
                                                    "facts": facts})
    return page(request, "models.html", "Models", by_connection=sorted(grouped.items()),
                choices=choices(state))


@router.get("/ui/keys")
async def keys(request: Request) -> HTMLResponse:
    listed = await admin_keys.list_keys(request)
    return page(request, "keys.html", "Gateway keys", keys=listed["keys"], required=listed["required"],
                choices=choices(context(request).config))


@router.get("/ui/settings")
async def settings(request: Request) -> HTMLResponse:
    ctx = context(request)
    s = ctx.settings
    server = [("Version", package_version()), ("Bind", s.bind), ("Port", s.port),
              ("Public URL", s.public_url or "not set"),
              ("Allowed hosts", s.allowed_hosts or "loopback only"),
              ("Allowed origins", s.allowed_origins or "the allowed hosts' own"),
              ("Admin token (BENCHWARMERS_ADMIN_TOKEN)", views.secret_state(s.admin_token is not None)),
              ("Gateway keys required", "yes" if (await admin_keys.list_keys(request))["required"] else "no"),
              ("Data folder", str(s.home)),
              ("Provider keys", "held by the callers only (BENCHWARMERS_KEY_<NAME>)")]
    return page(request, "settings.html", "Settings", scheduler=scheduler_rules.view(ctx.config, s.scheduler),
                gateway=config_views.settings(ctx.config), server=server, choices=choices(ctx.config))


@router.get("/ui/info")
async def info(request: Request) -> HTMLResponse:
    status = await admin_config.status(request)
    rows = views.info_rows(status, f"{platform.python_implementation()} {platform.python_version()}")
    return page(request, "info.html", "Info", rows=rows)


@router.get("/ui/mcp")
async def mcp(request: Request) -> HTMLResponse:
    notes = reads.Notes()
    sessions = await reads.reminders(request)
    calls = sorted({c for reminded in sessions.values() for c in reminded})
    owed = set(await notes.get("owed", reads.pending_of(request, calls), []))
    rows = [{"session": s[:12], "reminded": len(cs), "owed": sorted(c for c in cs if c in owed)}
            for s, cs in sorted(sessions.items())]
    return page(request, "mcp.html", "MCP sessions", notes=notes.items, sessions=rows)


@router.get("/ui/probes")
async def probes(request: Request) -> HTMLResponse:
    notes = reads.Notes()
    rows = await notes.get("probes", reads.sql(request, reads.PROBES), [])
    return page(request, "probes.html", "Probes", notes=notes.items, probes=rows)


@router.get("/ui/suite")
async def suite(request: Request) -> HTMLResponse:
    notes = reads.Notes()
    results = await notes.get("suite", reads.suite_results(request), None)
    return page(request, "suite.html", "Suite results", notes=notes.items,
                models=results.models if results else [], wrong=results.wrong if results else [])


@router.get("/ui/onboarding")
async def onboarding(request: Request, part: str = "") -> HTMLResponse:
    """The queue (refreshed live as `onboard_progress` events arrive: `?part=queue` skips the candidates,
    which ask every endpoint), a form to queue models, and the candidates with Dismiss."""
    notes = reads.Notes()
    queue = await notes.get("onboarding queue", reads.onboard_queue(request), None)
    found = None
    if part != "queue":
        found = await notes.get("candidates", reads.candidates(request), None)
    items = queue["items"] if queue else []
    return page(request, "onboarding.html", "Onboarding", notes=notes.items, queue=queue,
                items=bench_views.queue_rows(items), issues=queue["issues"] if queue else [],
                controls=bench_views.queue_controls(items, bool(queue and queue["stopping"])),
                candidates=found, choices=choices(context(request).config))


@router.get("/ui/discover")
async def discover(request: Request) -> HTMLResponse:
    """CAT-4's rows with the page's filters, Add (CAT-5) where a route exists, and each feed's status."""
    filters = bench_views.DiscoverFilters.of(request.query_params)
    listed = await admin_catalog.discover_list(request, free=filters.price == "free", new=filters.new)
    status = await admin_catalog.catalog_status(request)
    rows = bench_views.discover_rows([r.model_dump(mode="json") for r in listed["rows"]], filters)
    return page(request, "discover.html", "Discover", rows=rows, filters=filters,
                prices=bench_views.PRICES, reaches=bench_views.REACHES, baseline=listed["baseline"],
                feeds=bench_views.feed_rows(f.model_dump(mode="json") for f in status["feeds"]),
                refreshed=status["refreshed"], choices=choices(context(request).config))


@router.post("/ui/do/{action}")
async def act(request: Request, action: str) -> HTMLResponse:
    """One form: refused beside its fields (the admin API's reasons), or done (the page reloads)."""
    form = forms.FORMS.get(action)
    try:
        sent = json.loads(await request.body())
    except ValueError:
        sent = None
    if form is None or not isinstance(sent, dict):
        return HTMLResponse("<p class='error' role='alert'>That form is not one this dashboard has.</p>",
                            status_code=400 if form else 404)
    outcome = await actions.run(request, form, sent)
    fid = str(sent.get("_form") or action)
    if outcome.refresh:
        return HTMLResponse("", headers={"HX-Refresh": "true", "Cache-Control": "no-store"})
    values = {name: forms.text_of(value) for name, value in sent.items()}
    return fragment("fragment.html", status=outcome.status, action=action, fid=fid, shown=outcome.shown,
                    values=values, errors=outcome.errors, choices=choices(context(request).config),
                    headers={"HX-Trigger": "bench-changed"} if outcome.shown else None)


@router.get("/ui/live")
async def live(request: Request, since: int | None = None) -> StreamingResponse:
    """Server-Sent Events: `change` with the kind of event the bus carried, as it happens, and `catch-up`
    first when something happened since the page's `since` (its stream position when it was read)."""
    hub = live_hub(request)

    def gone() -> Any:
        if getattr(request.app.state, "draining", False):
            return True
        return request.is_disconnected()

    return StreamingResponse(hub.stream(gone, since), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


@router.get("/ui/static/{name}")
async def static_file(name: str) -> Response:
    return static(name)
