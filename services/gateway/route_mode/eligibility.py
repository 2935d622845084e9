"""Who may take a route-mode turn (RM-2), and why each other member may not.

The raw member list (deduped, NOT capped by max_calls) minus: retired members, ad hoc ones (never routed to
automatically, C-8), vision specialists when the request has no images, members reached through another
API than chat completions, members not known to call tools when the request has tools, members that
cannot see its images (P-6), and members whose known window is under the request's estimate (messages as
P-5, plus the JSON of every tool call and tool definition, plus 2,500 per image). Every exclusion is named
with its why, for `bench.skipped`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from services.gateway.ask import Refusal
from services.gateway.panel.flatten import estimate_text, flatten
from services.gateway.route_mode.conversation import canonical_collection
from shared.config_state import ConfigState

VISION_SPECIALIST = "a vision specialist: sits only when the request carries images"
AD_HOC = "ad hoc: never routed to automatically"
NOT_REGISTERED = "not registered on the bench; take it out of the collection"
TOOLS_UNKNOWN = "not known to call tools: tick Tool calling in its model popup if it does"
VISION_UNKNOWN = "not known to read images: tick Vision / OCR in its model popup if it does"
IMAGE_NOTE = " (each image counted as 2,500)"


@dataclass(frozen=True)
class Member:
    """A collection member's registration facts, as far as route mode cares."""

    alias: str
    served: str = ""
    endpoint: str = ""
    api: str = "chat"  # the endpoint's API (C-3)
    role: str = "general"
    ad_hoc: bool = False
    tools: bool | None = None  # catalog capability: None = unknown, False = known not to
    vision: bool | None = None
    context_window: int | None = None
    max_output: int | None = None
    source: str = "its registration"  # where the capability facts came from, named in a why
    retired_on: date | None = None  # set: retired from the bench on that day
    registered: bool = True  # False: the collection names an alias the bench does not know


@dataclass(frozen=True)
class Skipped:
    alias: str
    why: str
    too_small: bool = False  # excluded only because its known window is under the estimate

    def as_json(self) -> dict[str, str]:
        return {"alias": self.alias, "why": self.why}


@dataclass(frozen=True)
class Eligibility:
    eligible: tuple[Member, ...]
    skipped: tuple[Skipped, ...]

    @property
    def aliases(self) -> list[str]:
        return [m.alias for m in self.eligible]

    def member(self, alias: str) -> Member:
        return next(m for m in self.eligible if m.alias == alias)

    def skipped_json(self) -> list[dict[str, str]]:
        return [s.as_json() for s in self.skipped]


@dataclass(frozen=True)
class TurnNeeds:
    """What the request asks of a member."""

    tools: bool  # it offers tools, or carries tool calls or results
    images: int
    estimate: int


def request_estimate(messages: Sequence[dict[str, Any]], route_fields: Mapping[str, Any]) -> int:
    """RM-2: the P-5 estimate of the messages (2,500 per image included), plus the JSON of every tool call in
    them and of the tool definitions."""
    flat = flatten(list(messages))
    text = f"{flat.system}\n\n{flat.prompt}" if flat.system else flat.prompt
    calls = [call for m in messages for call in (m.get("tool_calls") or [])]
    tools = route_fields.get("tools") or []
    extra = (json.dumps(calls, ensure_ascii=False) if calls else "") + (
        json.dumps(tools, ensure_ascii=False) if tools else "")
    return estimate_text(text) + estimate_text(extra) + 2_500 * flat.images


def turn_needs(messages: Sequence[dict[str, Any]], route_fields: Mapping[str, Any]) -> TurnNeeds:
    has_tools = bool(route_fields.get("tools")) or any(
        m.get("role") == "tool" or m.get("tool_calls") for m in messages)
    return TurnNeeds(tools=has_tools, images=flatten(list(messages)).images,
                     estimate=request_estimate(messages, route_fields))


def why_not(member: Member, needs: TurnNeeds) -> Skipped | None:
    """The first reason `member` cannot take the turn, or None."""
    alias = member.alias
    if not member.registered:
        return Skipped(alias, NOT_REGISTERED)
    if member.retired_on is not None:
        return Skipped(alias, f"retired from the bench on {member.retired_on:%Y-%m-%d}; take it out of the "
                              "collection (Restore in its model popup brings it back)")
    if member.ad_hoc:
        return Skipped(alias, AD_HOC)
    if member.role == "vision" and not needs.images:
        return Skipped(alias, VISION_SPECIALIST)
    if member.api != "chat":
        return Skipped(alias, f"reached through the {member.api} API; route mode passes requests on to chat "
                              "completions only")
    if needs.tools and member.tools is not True:
        why = TOOLS_UNKNOWN if member.tools is None else f"does not call tools (says {member.source})"
        return Skipped(alias, why)
    if needs.images and member.vision is not True:
        why = VISION_UNKNOWN if member.vision is None else f"does not take images (says {member.source})"
        return Skipped(alias, why)
    if member.context_window is not None and member.context_window < needs.estimate:
        window, estimate = member.context_window, needs.estimate
        why = f"context window {window:,} is under this request (about {estimate:,} tokens)"
        return Skipped(alias, why, too_small=True)
    return None


def eligible_members(collection: str, members: Sequence[Member], needs: TurnNeeds) -> Eligibility:
    """RM-2. Raises `Refusal`: 503 when the collection has no members at all; when none is eligible, 413 if
    every skipped member is only too small, else 400, naming each member and why."""
    name = canonical_collection(collection)
    firsts: dict[str, Member] = {}
    for member in members:
        firsts.setdefault(member.alias, member)  # deduped, the first wins
    unique = list(firsts.values())
    if not unique:
        raise Refusal(503, f"{name} has no members to route to: add members to the collection")
    eligible: list[Member] = []
    skipped: list[Skipped] = []
    for member in unique:
        skip = why_not(member, needs)
        if skip is None:
            eligible.append(member)
        else:
            skipped.append(skip)
    if eligible:
        return Eligibility(tuple(eligible), tuple(skipped))
    listing = "; ".join(f"{s.alias} ({s.why})" for s in skipped)
    message = f"no member of {name} can take this request: {listing}"
    if all(s.too_small for s in skipped):
        smallest = min(m.context_window or 0 for m in unique)
        note = IMAGE_NOTE if needs.images else ""
        raise Refusal(413, f"{message}. The request is about {needs.estimate:,} tokens{note}: trim it under "
                           f"{smallest:,} (GET /v1/models shows together.context_window)")
    raise Refusal(400, message)


def members_from_config(collection: str, config: ConfigState) -> list[Member]:
    """The collection's raw member list (deduped, not capped) with each member's facts, including members
    retirement took out of it since it was last saved (so they are named as skipped)."""
    name = collection.removeprefix("bench/")
    col = config.collections.get(name)
    if col is None:
        return []
    out: list[Member] = []
    for alias in dict.fromkeys(col.members):
        model = config.models.get(alias)
        if model is None:
            retired = config.retired.get(alias)
            gone = Member(alias, retired_on=_day(retired.at)) if retired else Member(alias, registered=False)
            out.append(gone)
            continue
        endpoint = config.endpoints.get(model.endpoint)
        out.append(Member(
            alias=alias, served=model.served, endpoint=model.endpoint,
            api=endpoint.api if endpoint else "chat", role=model.role, ad_hoc=model.ad_hoc, tools=model.tools,
            vision=model.vision,
            context_window=model.context_window, max_output=model.max_output,
        ))
    for alias, record in config.retired.items():
        taken_out = "members" in record.collections.get(name, []) and _utc(col.at) <= _utc(record.at)
        if taken_out and alias not in col.members:
            out.append(Member(alias, served=record.model.served, retired_on=_day(record.at)))
    return out


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def _day(moment: datetime) -> date:
    return _utc(moment).date()
