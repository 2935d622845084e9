"""Who sits on a panel (SPEC P-2..P-9, P-15): members, explorer seats, skips with why, the size check, and
who may merge. Pure.

`plan_panel` reads the configuration fold and the rotation state and returns a `Draft` (or a refusal). The
transport gives the draft its reserved panel id, holds its seats for rotation and publishes `PanelSeated`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from services.seater.ranking import merger_candidates
from services.seater.rotation import Rotation, as_utc
from services.seater.shapes import COLLECTION_SHAPES, Picked, admits
from shared.alerts import paid_hold, retiring
from shared.commands import MergerCandidate, Plan, PlanRefusal, PlanRequest
from shared.config_state import ConfigState, RetiredModel, family
from shared.events import CollectionSaved, ModelRegistered, PanelSeated, SeatPlan, Skip

# Explorer seats in order: call id suffix and seat label (SPEC C-12). At most two, whatever the settings say.
EXPLORER_SEATS = (("explorer", "explorer"), ("explorer2", "explorer 2"))

VISION_SPECIALIST = "a vision specialist: sits only when the request carries images"
NOT_REGISTERED = "not registered on the bench; take it out of the collection"
TOKENS_PER_IMAGE = 2_500


@dataclass(frozen=True)
class Draft:
    """A panel before it has an id: the sitting members, the explorer seats filled, every skip, and (merged
    replies only) the merger candidates, best first."""

    collection: str
    shape: str
    shape_by: str
    members: tuple[ModelRegistered, ...]
    explorers: tuple[ModelRegistered, ...]
    skipped: tuple[Skip, ...]
    mergers: tuple[ModelRegistered, ...] = ()

    def aliases(self) -> list[str]:
        return [m.alias for m in (*self.members, *self.explorers)]

    def seats(self, panel: str, config: ConfigState) -> list[SeatPlan]:
        labelled = [(f"member{i}", "member", m) for i, m in enumerate(self.members, 1)]
        explorer_seats = zip(EXPLORER_SEATS, self.explorers, strict=False)
        labelled += [(suffix, label, m) for (suffix, label), m in explorer_seats]
        return [
            SeatPlan(
                call=f"{panel}.{suffix}", seat=label, alias=m.alias, served=m.served, endpoint=m.endpoint,
                connection=config.connection_of(m.alias),
            )
            for suffix, label, m in labelled
        ]

    def plan(self, panel: str, seats: list[SeatPlan], config: ConfigState) -> Plan:
        mergers = [
            MergerCandidate(
                alias=m.alias, served=m.served, endpoint=m.endpoint, connection=config.connection_of(m.alias),
                context_window=m.context_window,
            )
            for m in self.mergers
        ]
        return Plan(
            panel=panel, collection=self.collection, shape=self.shape, shape_by=self.shape_by,
            members=len(self.members), explorers=len(self.explorers), seats=seats, skipped=list(self.skipped),
            mergers=mergers,
        )

    def seated(self, panel: str, seats: list[SeatPlan], key: str, at: datetime, by: str) -> PanelSeated:
        return PanelSeated(
            id=f"seated:{panel}", at=at, by=by, panel=panel, collection=self.collection, shape=self.shape,
            shape_by=self.shape_by, key=key, seats=seats, skipped=list(self.skipped),
        )


# ---------------------------------------------------------------- messages


def collection_listing(config: ConfigState) -> str:
    """Every collection as `- bench/<name>: <description> [<tags>]`, by name, or how to make one.

    Worded like the gateway's own refusal, so a client sees the same list whichever of the two refused.
    """
    if not config.collections:
        return (
            "There are no collections yet: make one with "
            "`bench collection save <name> --members <alias>,...` (or POST /api/collection)."
        )
    lines = []
    for name, col in sorted(config.collections.items()):
        line = f"- bench/{name}: {col.description or '(no description)'}"
        lines.append(f"{line} [{', '.join(col.tags)}]" if col.tags else line)
    return "Your collections:\n" + "\n".join(lines)


def saved_collection(asked: str, config: ConfigState) -> CollectionSaved | PlanRefusal:
    """The collection a request names (`bench/` or not), or a 404 listing the ones there are."""
    name = asked.removeprefix("bench/")
    col = config.collections.get(name)
    if col is None:
        message = f"no collection named 'bench/{name}'. {collection_listing(config)}"
        return PlanRefusal(status=404, message=message)
    return col


def retired_on(record: RetiredModel) -> str:
    return f"retired from the bench on {as_utc(record.at):%Y-%m-%d}"


def blind_why(model: ModelRegistered, config: ConfigState) -> str | None:
    """Why a model cannot be shown the request's images (P-6), or None when it can see."""
    endpoint = config.endpoints.get(model.endpoint)
    if endpoint is not None and endpoint.api == "responses":
        return "reached through a responses (ChatGPT plan) endpoint, which never gets images"
    if model.vision is None:
        return "not known to read images: tick Vision / OCR in its model popup if it does"
    if model.vision is False:
        return f"does not take images (says {config.fact_source(model.alias, 'vision')})"
    return None


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def retired_from(
    col: CollectionSaved, place: str, config: ConfigState
) -> Iterator[tuple[str, RetiredModel]]:
    """Models retirement took out of this collection's `place` (members / merger) since it was last saved.

    Retiring edits the collection in the fold; a collection saved after the retirement is the user's own
    list, so the retired model is no longer news there.
    """
    for alias, record in config.retired.items():
        if place in record.collections.get(col.name, []) and as_utc(col.at) <= as_utc(record.at):
            yield alias, record


# ---------------------------------------------------------------- the plan


def explorer_seats_of(col: CollectionSaved, config: ConfigState) -> int:
    """P-3: the explorer seats of a panel of this collection (members counted after the retired skip and
    the cap), at most two."""
    return min(config.explorer_count(len(_members(col, config, []))), len(EXPLORER_SEATS))


def plan_panel(
    request: PlanRequest, config: ConfigState, rotation: Rotation, now: datetime, picked: Picked | None = None
) -> Draft | PlanRefusal:
    """`picked`: the shape picker's answer (P-4), when the seater asked it."""
    col = saved_collection(request.collection, config)
    if isinstance(col, PlanRefusal):
        return col
    name = col.name
    if col.shape and col.shape not in COLLECTION_SHAPES:
        message = f"collection '{name}' has shape '{col.shape}'; shapes are {', '.join(COLLECTION_SHAPES)}"
        return PlanRefusal(status=400, message=message)
    skipped: list[Skip] = []
    members = _members(col, config, skipped)
    # P-3: explorer seats counted before the image/vision skips; seats those skips free are not refilled.
    explorer_seats = min(config.explorer_count(len(members)), len(EXPLORER_SEATS))
    sitting = _sitting(members, request.has_images, config, skipped)
    too_small = _too_small(sitting, request)
    if too_small is not None:
        return too_small
    if request.reply == "merged":
        skipped += _merger_skips(col, config)
    nominees = _nominees(request.with_, col, config, skipped)
    shape, shape_by = _shape(col, request.has_images, explorer_seats, picked)
    explorers = _nominated(nominees[:explorer_seats], request.has_images, config, skipped)
    _fill_by_staleness(explorers, explorer_seats, col, shape, request, config, rotation, now)
    if not sitting and not explorers:
        return _no_seat(name, request.has_images, skipped)
    mergers: tuple[ModelRegistered, ...] = ()
    if request.reply == "merged":
        mergers = tuple(config.models[a] for a in merger_candidates(col, shape, config, rotation))
    return Draft(
        collection=name, shape=shape, shape_by=shape_by, members=tuple(sitting), explorers=tuple(explorers),
        skipped=tuple(skipped), mergers=mergers,
    )


def _members(col: CollectionSaved, config: ConfigState, skipped: list[Skip]) -> list[ModelRegistered]:
    """P-2: deduped; retired or unregistered ones skipped BEFORE the cap (so the next one sits); capped."""
    listed = _unique(col.members)
    for alias, record in retired_from(col, "members", config):
        if alias not in listed:
            skipped.append(Skip(seat="member", alias=alias, why=member_retired_why(record)))
    registered: list[ModelRegistered] = []
    for alias in listed:
        model = config.models.get(alias)
        if model is not None:
            registered.append(model)
        elif alias in config.retired:
            skipped.append(Skip(seat="member", alias=alias, why=member_retired_why(config.retired[alias])))
        else:
            skipped.append(Skip(seat="member", alias=alias, why=NOT_REGISTERED))
    return registered[: config.max_calls]


def _sitting(
    members: list[ModelRegistered], images: bool, config: ConfigState, skipped: list[Skip]
) -> list[ModelRegistered]:
    """With images, members that cannot see stand down; without, vision specialists do."""
    sitting = []
    for model in members:
        why: str | None = None
        if images:
            why = blind_why(model, config)
        elif model.role == "vision":
            why = VISION_SPECIALIST
        if why:
            skipped.append(Skip(seat="member", alias=model.alias, why=why))
        else:
            sitting.append(model)
    return sitting


def _too_small(sitting: list[ModelRegistered], request: PlanRequest) -> PlanRefusal | None:
    """P-5: 413 when a sitting member's KNOWN window is below the estimate, naming each such member with its
    window (smallest first). Unknown windows never refuse; explorers too small are simply not picked."""
    small = sorted(
        (m for m in sitting if m.context_window is not None and m.context_window < request.estimate),
        key=lambda m: (m.context_window or 0, m.alias),
    )
    if not small:
        return None
    named = ", ".join(f"{m.alias} ({m.context_window:,} tokens)" for m in small)
    counted = f" (each image counted as {TOKENS_PER_IMAGE:,})" if request.has_images else ""
    message = (
        f"the request is about {request.estimate:,} tokens{counted}, more than the context window of "
        f"{named}. Trim it under {small[0].context_window:,} tokens, or ask a collection whose "
        "`together.context_window` (GET /v1/models) is large enough"
    )
    return PlanRefusal(status=413, message=message)


def _nominees(named: list[str], col: CollectionSaved, config: ConfigState, skipped: list[Skip]) -> list[str]:
    """`with`: deduped, members dropped, retired ones skipped (seat `with`)."""
    nominees = []
    for alias in _unique(named):
        if alias in col.members:
            continue
        if alias in config.retired:
            why = f"{retired_on(config.retired[alias])} (Restore in its model popup brings it back)"
            skipped.append(Skip(seat="with", alias=alias, why=why))
        else:
            nominees.append(alias)
    return nominees


def _nominated(
    nominees: list[str], images: bool, config: ConfigState, skipped: list[Skip]
) -> list[ModelRegistered]:
    """P-8: each nominee takes a seat (ad hoc, size and role notwithstanding). One not registered, or blind
    to the request's images, is not seated and leaves its seat to staleness."""
    explorers = []
    for alias in nominees:
        model = config.models.get(alias)
        if model is None:
            continue
        why = blind_why(model, config) if images else None
        if why:
            skipped.append(Skip(seat="with", alias=alias, why=why))
        else:
            explorers.append(model)
    return explorers


def _fill_by_staleness(
    explorers: list[ModelRegistered], explorer_seats: int, col: CollectionSaved, shape: str,
    request: PlanRequest, config: ConfigState, rotation: Rotation, now: datetime,
) -> None:
    """P-7: each free seat goes to the eligible model whose last seat is oldest (never seated = oldest), the
    lower suite recall first among equally stale ones (T-5; never scored = 0), then registry order (`min`
    keeps it); never a member, a member's family, or a chosen seat's family."""
    if len(explorers) >= explorer_seats:
        return
    taken = set(col.members) | {m.alias for m in explorers}
    families = {family(config.models[a].served) for a in col.members if a in config.models}
    families |= {family(m.served) for m in explorers}
    # Whether a model may explore does not depend on the seats taken since: it is asked once per model.
    pool = [m for m in config.models.values() if m.alias not in taken and family(m.served) not in families
            and _can_explore(m, shape, request, config, rotation, now)]
    while pool and len(explorers) < explorer_seats:
        chosen = min(pool, key=lambda m: (rotation.last_seat(m.alias), rotation.suite.recall(m.alias).ratio))
        explorers.append(chosen)
        pool = [m for m in pool if m.alias != chosen.alias and family(m.served) != family(chosen.served)]


def member_retired_why(record: RetiredModel) -> str:
    return f"{retired_on(record)}; take it out of the collection (Restore in its model popup brings it back)"


def _merger_skips(col: CollectionSaved, config: ConfigState) -> list[Skip]:
    """In merged mode a merger gone from the bench is named; the merger is then chosen by verdicts."""
    tail = "the merger is chosen by verdicts"
    skips = [
        Skip(seat="merger", alias=alias, why=f"{retired_on(record)}; {tail}")
        for alias, record in retired_from(col, "merger", config)
    ]
    if col.merger and col.merger not in config.models:
        record = config.retired.get(col.merger)
        gone = retired_on(record) if record else "not registered on the bench"
        skips.append(Skip(seat="merger", alias=col.merger, why=f"{gone}; {tail}"))
    return skips


def _shape(col: CollectionSaved, images: bool, explorer_seats: int, picked: Picked | None) -> tuple[str, str]:
    """P-4: images, no explorer seats, the collection's own shape, then the picker's answer if it was
    asked (`shape_picker`)."""
    if images and not col.shape:
        return "vision", "the request carries images"
    if explorer_seats == 0:
        return col.shape or "general", "no explorer seats to fill"
    if col.shape:
        return col.shape, "set on the collection"
    if picked is not None:
        return picked
    return "general", "no decision model onboarded"


def _can_explore(
    model: ModelRegistered, shape: str, request: PlanRequest, config: ConfigState, rotation: Rotation,
    now: datetime,
) -> bool:
    """P-7's pool: on a known endpoint, not ad hoc, admitted by the shape, not resting or on a `retiring`
    alert (A-7), not held by the free-tier guard (U-5: its seat would only be the guard's error), big
    enough."""
    if model.ad_hoc or model.endpoint not in config.endpoints or not admits(shape, model.role):
        return False
    if rotation.cooling(model.alias, now) or retiring(config.alerts, model.served) is not None:
        return False
    # A caller's BENCH_ALLOW_PAID is not in the stream, so the seater cannot see it: only the alert and the
    # configured `allow_paid` decide here (at worst a model such a caller would call sits out exploring).
    if paid_hold(config.alerts, config.allow_paid, model.alias, model.served) is not None:
        return False
    if model.context_window is not None and model.context_window < request.estimate:
        return False
    return not (request.has_images and blind_why(model, config))


def _no_seat(name: str, images: bool, skipped: list[Skip]) -> PlanRefusal:
    """P-9: 503, or 400 when the request had images (P-6), with each skip's reason."""
    message = f"collection '{name}' has no members and no explorer could be seated"
    if skipped:
        message += ": " + "; ".join(f"{s.alias} ({s.why})" for s in skipped)
    if images:
        message += (
            ". For images, ask a collection whose `together.capabilities` lists `vision` (see GET /v1/models)"
        )
    return PlanRefusal(status=400 if images else 503, message=message)
