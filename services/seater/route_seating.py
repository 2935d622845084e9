"""Who takes a route-mode turn (RM-2..RM-4), decided where panels are seated. Pure.

Every member of the collection (deduped, not capped) is a candidate, and members that retirement took out
of it since it was saved are named too. A member sits out, with its why, when it is retired, not
registered, ad hoc (never routed to automatically, C-8), a vision specialist and the request has no
images, reached through another API than chat completions, not known to call tools when the request has
tools, unable to see its images (P-6), or known to be smaller than the request. When none is left the turn
is refused: 503 when the collection has no members, 413 when every one is only too small, else 400.

The order: a conversation whose model can take this turn keeps it first, then its previous order, then the
other eligible members (RM-4); otherwise the eligible members are ranked (RM-3) by the rule the setting
chose (`ranking.ROUTE_RANKINGS`). A kept order depends on nothing but the configuration, the request's
tools, images and size, and the conversation's model and order: the seating says so (`reusable`), and up
to which size it holds, so a gateway can answer the conversation's next turns from it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from services.seater.planning import (
    NOT_REGISTERED,
    TOKENS_PER_IMAGE,
    VISION_SPECIALIST,
    blind_why,
    member_retired_why,
    retired_from,
    saved_collection,
)
from services.seater.ranking import RouteRanking, route_order
from services.seater.rotation import Rotation
from shared.commands import PlanRefusal, RouteRequest, RouteSeat, RouteSeating, TurnNeeds
from shared.config_state import ConfigState
from shared.events import ModelRegistered, Skip

AD_HOC = "ad hoc: never routed to automatically"
TOOLS_UNKNOWN = "not known to call tools: tick Tool calling in its model popup if it does"
NO_TOOLS = "does not call tools"


def seat_route(
    request: RouteRequest, config: ConfigState, rotation: Rotation, now: datetime, draw: Callable[[], float],
    ranking: RouteRanking = route_order,
) -> RouteSeating | PlanRefusal:
    col = saved_collection(request.collection, config)
    if isinstance(col, PlanRefusal):
        return col
    name = col.name
    listed = list(dict.fromkeys(col.members))
    listed += [alias for alias, _ in retired_from(col, "members", config) if alias not in listed]
    if not listed:
        message = f"bench/{name} has no members to route to: add members to the collection"
        return PlanRefusal(status=503, message=message)
    seats: list[RouteSeat] = []
    skipped: list[Skip] = []
    too_small: list[ModelRegistered] = []
    for alias in listed:
        model = config.models.get(alias)
        why = _why_not(alias, model, request.needs, config)
        if model is not None and why is None and (small := _too_small(model, request.needs)):
            why = small
            too_small.append(model)
        if model is not None and why is None:
            seats.append(_seat(model, config))
        else:
            skipped.append(Skip(seat="member", alias=alias, why=why or NOT_REGISTERED))
    if not seats:
        return _none_eligible(name, skipped, too_small, request.needs)
    eligible = [s.alias for s in seats]
    kept = request.current in eligible
    if kept:
        previous = [a for a in request.previous if a in eligible and a != request.current]
        rest = [a for a in eligible if a != request.current and a not in previous]
        order = [request.current, *previous, *rest]
    else:
        order = ranking(eligible, rotation, now, draw)
    shadows = [
        _seat(config.models[alias], config) for alias in dict.fromkeys(col.shadows)
        if alias in config.models and config.models[alias].endpoint in config.endpoints
    ]
    # Reusable: neither the rotation nor the draw chose the order, and no skip names this request's size.
    reusable = kept and not too_small
    windows = [w for alias in eligible if (w := config.models[alias].context_window) is not None]
    return RouteSeating(order=order, seats=seats, skipped=skipped, shadows=shadows, reusable=reusable,
                        fits_up_to=min(windows) if reusable and windows else None)


def _why_not(alias: str, model: ModelRegistered | None, needs: TurnNeeds, config: ConfigState) -> str | None:
    """The first reason `model` cannot take the turn, its size aside, or None."""
    if model is None:
        retired = config.retired.get(alias)
        return member_retired_why(retired) if retired else NOT_REGISTERED
    if model.ad_hoc:
        return AD_HOC
    if model.role == "vision" and not needs.images:
        return VISION_SPECIALIST
    endpoint = config.endpoints.get(model.endpoint)
    if endpoint is None:
        return f"its endpoint {model.endpoint!r} is not configured"
    if endpoint.api != "chat":
        return (f"reached through the {endpoint.api} API; route mode passes requests on to chat completions "
                "only")
    if needs.tools and model.tools is not True:
        if model.tools is None:
            return TOOLS_UNKNOWN
        return f"{NO_TOOLS} (says {config.fact_source(alias, 'tools')})"
    if needs.images:
        return blind_why(model, config)
    return None


def _too_small(model: ModelRegistered, needs: TurnNeeds) -> str | None:
    window = model.context_window
    if window is not None and window < needs.estimate:
        return f"context window {window:,} is under this request (about {needs.estimate:,} tokens)"
    return None


def _none_eligible(
    name: str, skipped: list[Skip], too_small: list[ModelRegistered], needs: TurnNeeds
) -> PlanRefusal:
    listing = "; ".join(f"{s.alias} ({s.why})" for s in skipped)
    message = f"no member of bench/{name} can take this request: {listing}"
    if len(too_small) < len(skipped):
        return PlanRefusal(status=400, message=message)
    smallest = min(m.context_window or 0 for m in too_small)
    note = f" (each image counted as {TOKENS_PER_IMAGE:,})" if needs.images else ""
    advice = f"trim it under {smallest:,} (GET /v1/models shows together.context_window)"
    size = f"The request is about {needs.estimate:,} tokens{note}"
    return PlanRefusal(status=413, message=f"{message}. {size}: {advice}")


def _seat(model: ModelRegistered, config: ConfigState) -> RouteSeat:
    return RouteSeat(
        alias=model.alias, served=model.served, endpoint=model.endpoint,
        connection=config.connection_of(model.alias), max_output=model.max_output,
        max_tokens=model.max_tokens,
    )
