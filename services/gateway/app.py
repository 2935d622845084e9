"""The gateway's FastAPI app: the bus connection and config fold in the lifespan, the routes of every
format, `/bench/*`, `/v1/models`, MCP and `/health`, and the surfaces the composition root adds beside them
(`shared/surface.py`: the console's admin API and dashboard)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import structlog
from fastapi import FastAPI
from starlette.routing import Route

from services.gateway.context import GatewayContext
from services.gateway.contract.document import completed
from services.gateway.deliver import PanelReplies
from services.gateway.formats import FORMATS
from services.gateway.formats.ollama import created_at
from services.gateway.gateway_paths import is_gateway_path
from services.gateway.guard import Guard
from services.gateway.http import AccessLog
from services.gateway.mcp.mount import LazyMcp
from services.gateway.methods import MethodTable
from services.gateway.panel.asker import GatewayPanels
from services.gateway.panel.runner import PanelRunner
from services.gateway.reply_mode import ReplyMode
from services.gateway.route_mode.answer import RouteReplies
from services.gateway.route_mode.desk import RouteDesk
from services.gateway.routes import bench, health
from services.gateway.routes.extras import extra_endpoint
from services.gateway.routes.fallback import CATCH_ALL, Fallback, shown_path
from services.gateway.routes.generate import PlainRoute, generation_endpoint
from shared import bus, subjects
from shared.bus_credentials import BusLogin
from shared.config_state import ConfigState
from shared.config_writer import ConfigWriter
from shared.ops import Readiness
from shared.runtime import report_mismatches, start_ops, watch_bus
from shared.settings import GatewaySettings, instance_name
from shared.surface import Surface

log = structlog.get_logger("gateway")


def create_app(
    settings: GatewaySettings, login: BusLogin, instance: str | None = None, surfaces: Sequence[Surface] = ()
) -> FastAPI:
    name = instance or instance_name("gateway")
    mcp = LazyMcp()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        readiness = Readiness()
        ops = await start_ops(settings, readiness)
        nc = await bus.connect(settings.nats_url, name, login)
        watch_bus(nc, readiness)
        js = nc.jetstream()
        report_mismatches(await bus.provision(js, settings.replicas, owner=False), readiness)
        config = ConfigState()
        projection = bus.Projection(js, subjects.CONFIG, config.apply, name="gateway-config")
        await projection.start()
        readiness.add("config", lambda: bus.caught_up(projection))
        readiness.add("draining", lambda: "stopping: draining requests" if draining(app) else None)
        panels = PanelRunner(nc, config, settings, name)
        ctx = GatewayContext(
            settings=settings, instance=name, nc=nc, js=js, config=config, projection=projection,
            panels=panels, modes=reply_modes(panels, RouteDesk(nc, config, settings, name), settings),
            writer=ConfigWriter(js, projection, config), started_at=created_at(),
        )
        app.state.ctx = ctx
        for surface in surfaces:
            await surface.start(app.state, ctx, GatewayPanels(ctx))
        log.info("gateway_ready", instance=name, port=settings.port, config_seq=config.seq)
        try:
            async with mcp.running():
                yield
        finally:
            for mode in set(ctx.modes.values()):
                await mode.close()
            for surface in surfaces:
                await surface.stop(app.state)
            await projection.stop()
            await nc.drain()
            if ops is not None:
                await ops.stop()

    # FastAPI's own OpenTelemetry hooks off: the gateway's metrics are Prometheus's (the ops port), and with
    # them on every request first asks OpenTelemetry whether anything is configured.
    app = FastAPI(title="Benchwarmers gateway", lifespan=lifespan, docs_url=None, redoc_url=None,
                  telemetry={"tracing": False, "metrics": False, "logs": False})

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = completed(FastAPI.openapi(app))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    app.add_middleware(Guard, settings=settings)  # inside the access log, which records its refusals too
    app.add_middleware(AccessLog)
    for fmt in FORMATS:
        for path in fmt.routes:
            app.router.add_api_route(path, generation_endpoint(fmt), methods=["POST"],
                                     route_class_override=PlainRoute)
        for route in fmt.extra_routes():
            app.add_api_route(route.path, extra_endpoint(fmt, route), methods=[route.method])
    for path in ("/v1/models", "/models"):
        app.add_api_route(path, bench.list_models, methods=["GET"])
    app.add_api_route("/bench/verdict", bench.verdict, methods=["POST"])
    app.add_api_route("/bench/pending", bench.pending, methods=["POST"])
    app.add_api_route("/bench/record", bench.record, methods=["GET"])
    for path in ("/mcp", "/v1/mcp"):
        app.router.routes.append(Route(path, mcp))  # every method: POST is MCP, the others told so (H-G13)
    app.add_api_route("/health", health.health, methods=["GET"])
    added = [router for surface in surfaces for router in surface.routers()]
    for router in added:
        app.include_router(router)

    get_routes, post_routes = gateway_routes(app)
    included = [route for router in added for route in router.routes]  # included without prefix
    table = MethodTable.of([*app.routes, *included], skip=CATCH_ALL)
    app.state.methods = table  # the guard's preflight answers with the path's own methods
    fallback = Fallback(table, tuple(get_routes), tuple(post_routes))
    app.router.routes.append(Route(CATCH_ALL, fallback, include_in_schema=False))  # any method, known or not
    return app


def draining(app: FastAPI) -> bool:
    """Set by the server's stop signal (`__main__`): requests in flight finish, nothing new should come."""
    return bool(getattr(app.state, "draining", False))


def reply_modes(
    panels: PanelRunner, routes: RouteDesk, settings: GatewaySettings
) -> dict[str, ReplyMode]:
    """Every reply mode this gateway answers, by the name a model string gives it."""
    panel = PanelReplies(panels, settings)
    return {"all": panel, "merged": panel, "route": RouteReplies(routes, settings)}


def gateway_routes(app: FastAPI) -> tuple[list[str], list[str]]:
    """The gateway routes by method, for the not-found message (H-G15)."""
    gets: list[str] = []
    posts: list[str] = []
    for route in app.routes:
        if isinstance(route, Route) and is_gateway_path(route.path):
            if "GET" in (route.methods or ()):
                gets.append(shown_path(route.path))
            if "POST" in (route.methods or ()):
                posts.append(shown_path(route.path))
    return gets, posts
