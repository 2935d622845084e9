"""View-models of the pages issue 20's features fill: Onboarding (the queue, its steps, candidates),
Discover (CAT-4's rows, the price/new/reach filters, where "Add" can queue a row: CAT-5) and a model's facts
(C-15). Pure, so what each page shows is tested without a server."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from shared.onboarding import FINISHED, STEPS

STEP_NAMES = ("listed", "registered", "facts", "probe", "suite")  # O-1
MODES = (("full", "Full: probe and suite now"), ("quick", "Quick: probe now, the suite later"),
         ("quick-adhoc", "Quick + ad hoc: probe only, never called on its own"))
PRICES = (("", "any price"), ("free", "free"), ("paid", "paid"))
REACHES = ("connected", "easy to add", "on bench", "other")


# ---------------------------------------------------------------- onboarding (O-1..O-4)


def step_text(item: Mapping[str, Any]) -> str:
    """Where an item is: waiting, `step 3 of 5: facts` while it runs, or the step it stopped at."""
    state, step = item["state"], int(item.get("step") or 0)
    name = STEP_NAMES[step - 1] if 1 <= step <= STEPS else ""
    if state == "queued":
        return "waiting its turn"
    if state == "running":
        return f"step {step} of {STEPS}: {name}" if name else "starting"
    if state == "done":
        return "finished"
    return f"stopped at step {step} of {STEPS}: {name}" if name else "stopped before its first step"


def queue_rows(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{**item, "where": step_text(item), "mode_label": dict(MODES).get(item["mode"], item["mode"])}
            for item in items]


@dataclass(frozen=True)
class Controls:
    """Stop while anything waits or runs; Clear once a batch has finished (O-3: refused while running)."""

    stop: bool
    clear: bool


def queue_controls(items: Iterable[Mapping[str, Any]], stopping: bool) -> Controls:
    states = [item["state"] for item in items]
    busy = any(s not in FINISHED for s in states)
    return Controls(stop=busy and not stopping, clear=bool(states) and not busy)


# ---------------------------------------------------------------- discover (CAT-4, CAT-5)


@dataclass(frozen=True)
class DiscoverFilters:
    price: str = ""  # "", free, paid
    new: bool = False
    reach: str = ""

    @classmethod
    def of(cls, query: Mapping[str, str]) -> DiscoverFilters:
        price = query.get("price", "")
        reach = query.get("reach", "")
        return cls(price if price in dict(PRICES) else "", query.get("new", "") in ("1", "on", "true"),
                   reach if reach in REACHES else "")

    def keeps(self, row: Mapping[str, Any]) -> bool:
        if self.price and row["free"] != (self.price == "free"):
            return False
        return (not self.new or row["new"]) and (not self.reach or row["reach"] == self.reach)


def price_text(row: Mapping[str, Any]) -> str:
    if row["free"]:
        return "free"
    cost = row.get("cost")
    if not cost:
        return "price unknown"
    return f"${cost['input']:g} in, ${cost['output']:g} out per M tokens"


def add_route(row: Mapping[str, Any], endpoint: str = "") -> tuple[str | None, str]:
    """CAT-5 direct route: the endpoint of this bench a row's model is onboarded through, or why it cannot
    be. `endpoint` is the one asked for (empty: the first that reaches the provider)."""
    provider, routes = row["provider"], list(row.get("endpoints") or [])
    if row["reach"] == "on bench":
        return None, f"{row['model']} is on the bench already (through {', '.join(routes) or provider})"
    if not routes:
        if row["reach"] == "easy to add":
            return None, (f"no endpoint of this bench reaches {provider}; add one for it (its "
                          "OpenAI-compatible API is known), then Add")
        return None, f"no endpoint of this bench reaches {provider}, and no OpenAI-compatible API is known"
    if endpoint and endpoint not in routes:
        return None, f"endpoint {endpoint!r} does not reach {provider} (those that do: {', '.join(routes)})"
    return endpoint or routes[0], ""


def discover_rows(rows: Iterable[Mapping[str, Any]], filters: DiscoverFilters) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        if not filters.keeps(row):
            continue
        route, why = add_route(row)
        caps = [name for name in ("tools", "vision") if row.get(name)]
        out.append({**row, "price": price_text(row), "route": route, "why": why,
                    "capabilities": ", ".join(caps) or "text"})
    return out


def age_text(seconds: float | None) -> str:
    if seconds is None:
        return "never fetched"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min"
    hours = minutes // 60
    return f"{hours} h {minutes % 60} min" if hours < 48 else f"{hours // 24} days"


def feed_rows(feeds: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{**feed, "age": age_text(feed.get("age_s"))} for feed in feeds]


# ---------------------------------------------------------------- facts (C-15)


def fact_text(value: Any) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return f"${value['input']:g} in, ${value['output']:g} out per M tokens"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def fact_rows(facts: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each fact with its value and source; only the user's own (`you`) can be cleared."""
    return [{"fact": f["fact"], "label": f["fact"].replace("_", " "), "value": fact_text(f["value"]),
             "source": f["source"] or "nobody yet", "mine": f["source"] == "you"} for f in facts]
