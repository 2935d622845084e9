"""The dashboard's view-models: what each page shows, made from the admin API's replies and the ledger's
rows. Pure, so every page's content is tested without a server (SPEC H-D4, P-17, L-7)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from services.console.dashboard.plots import Plot, Point, cumulative, plot

STATUSES = ("healthy", "failing", "cooling", "retiring", "untested", "retired")
RESTORE_DAYS = 7  # H-D4: retirements of the last 7 days are offered Restore


# ---------------------------------------------------------------- at a glance


PRICES = ("free", "paid", "unknown")


@dataclass(frozen=True)
class Filters:
    connection: str = ""
    status: str = ""
    role: str = ""
    retired: bool = False
    price: str = ""

    @classmethod
    def of(cls, query: Mapping[str, str]) -> Filters:
        return cls(query.get("connection", ""), query.get("status", ""), query.get("role", ""),
                   query.get("retired", "") in ("1", "on", "true"), query.get("price", ""))

    def keeps(self, row: Mapping[str, Any]) -> bool:
        if row.get("retired") and not (self.retired or self.status == "retired"):
            return False
        return all(not want or row.get(key) == want for key, want in
                   (("connection", self.connection), ("status", self.status), ("role", self.role),
                    ("price", self.price)))


def price_of(cost: Mapping[str, float] | None, served: str) -> str:
    """H-D4's price filter: free (a `:free` id, or a cost of 0 both ways), paid (a price known), unknown."""
    if served.endswith(":free") or (cost is not None and cost["input"] == 0 and cost["output"] == 0):
        return "free"
    return "unknown" if cost is None else "paid"


def glance_rows(models: Iterable[Mapping[str, Any]], verdicts: Mapping[str, tuple[int, int]],
                suite: Mapping[str, tuple[int, int]], filters: Filters) -> list[dict[str, Any]]:
    """Every model the filters keep: its status, role, context, capabilities, useful/judged, suite score
    (found of), latest probe. Retired ones last, then by alias."""
    rows = []
    for model in models:
        if not filters.keeps(model):
            continue
        useful, judged = verdicts.get(model["alias"], (0, 0))
        found, of = suite.get(model["alias"], (0, 0))
        caps = [name for name in ("tools", "vision") if model.get(name)]
        probe = model.get("last_probe")
        rows.append({**model, "useful": useful, "judged": judged, "found": found, "of": of,
                     "capabilities": ", ".join(caps) or "text only",
                     "probe": probe_text(probe)})
    return sorted(rows, key=lambda r: (bool(r.get("retired")), str(r["alias"]).lower()))


def probe_text(probe: Mapping[str, Any] | None) -> str:
    if not probe:
        return "never"
    at = probe["at"]
    when = at.strftime("%Y-%m-%d %H:%M") if isinstance(at, datetime) else str(at)[:16].replace("T", " ")
    return f"{when} {'answered' if probe['answered'] else 'failed: ' + str(probe.get('failure') or '?')}"


def filter_options(models: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    rows = list(models)
    return {"connection": sorted({str(m["connection"]) for m in rows}),
            "status": list(STATUSES), "role": sorted({str(m["role"]) for m in rows}), "price": list(PRICES)}


@dataclass(frozen=True)
class Action:
    """One line of "Action needed": what happened, and the buttons that fix it."""

    key: str
    message: str
    advice: str
    alias: str | None
    buttons: tuple[str, ...]  # retry, retire, restore


def action_needed(alerts: Iterable[Mapping[str, Any]], models: Iterable[Mapping[str, Any]],
                  now: datetime) -> list[Action]:
    """Active alerts (Retry and Retire for a model's) and retirements of the last 7 days (Restore)."""
    active = {m["alias"] for m in models if not m.get("retired")}
    out = []
    for alert in alerts:
        alias = alert.get("alias")
        buttons = ("retry", "retire") if alias in active else ()
        out.append(Action(alert["key"], alert["message"], alert.get("action") or "", alias, buttons))
    for model in models:
        at = model.get("retired_at")
        if model.get("retired") and isinstance(at, datetime) and now - at <= timedelta(days=RESTORE_DAYS):
            alias = model["alias"]
            out.append(Action(f"retired:{alias}", f"{alias} was retired {at:%Y-%m-%d %H:%M}",
                              str(model.get("retired_why") or ""), alias, ("restore",)))
    return out


@dataclass(frozen=True)
class Step:
    name: str
    done: bool
    how: str


def first_run(endpoints: int, models: int, collections: int, panels: int) -> list[Step]:
    """H-D4's guide: endpoint → models → collection → first ask; shown until all four are done."""
    return [
        Step("Add an endpoint", endpoints > 0, "where models are served from; the callers hold its key"),
        Step("Add models", models > 0, "each served model under an alias"),
        Step("Save a collection", collections > 0, "the panel you ask"),
        Step("Ask it", panels > 0, "every member answers side by side"),
    ]


# ---------------------------------------------------------------- collections: recent panels and Owed


@dataclass
class Seat:
    call: str
    seat: str
    alias: str
    status: str
    seconds: float
    owed: bool


@dataclass
class Panel:
    panel: str
    at: datetime | None
    collection: str
    seats: list[Seat] = field(default_factory=list)


def panels(rows: Iterable[Sequence[Any]], pending: Iterable[str]) -> list[Panel]:
    """Rows of (panel, at, collection, call, seat, alias, status, seconds), newest panel first, grouped
    into panels; a seat is owed when the ledger still waits for its verdict (P-17)."""
    owed = set(pending)
    out: dict[str, Panel] = {}
    for panel, at, collection, call, seat, alias, status, seconds in rows:
        entry = out.setdefault(panel, Panel(panel, at, collection or ""))
        if call:
            entry.seats.append(Seat(call, seat, alias, status, float(seconds or 0), call in owed))
    return list(out.values())


def owed_seats(recent: Iterable[Panel]) -> list[tuple[Panel, Seat]]:
    return [(p, s) for p in recent for s in p.seats if s.owed]


# ---------------------------------------------------------------- usage and quotas (L-5, L-7)


def usage_plots(rows: Iterable[Mapping[str, Any]]) -> list[Plot]:
    """Calls and tokens so far, and each call's latency, per model, over time: one mark per call."""
    calls: dict[str, list[Point]] = {}
    tokens: dict[str, list[Point]] = {}
    latency: dict[str, list[Point]] = {}
    for row in rows:
        alias, t = str(row["alias"]), row["t"]
        calls.setdefault(alias, []).append((t, 1.0))
        tokens.setdefault(alias, []).append((t, float(row["tokens_in"] + row["tokens_out"])))
        latency.setdefault(alias, []).append((t, float(row["seconds"])))
    return [
        plot("Calls", "calls", {a: cumulative(p) for a, p in calls.items()}),
        plot("Tokens", "tokens", {a: cumulative(p) for a, p in tokens.items()}),
        plot("Latency", "s", latency),
    ]


@dataclass(frozen=True)
class Burn:
    connection: str
    alias: str
    metric: str
    window: str
    left: int | None
    of: int | None
    resets: str
    source: str

    @property
    def used_percent(self) -> int | None:
        if self.of is None or self.left is None or self.of <= 0:
            return None
        return max(0, min(100, round((self.of - self.left) / self.of * 100)))


def quota_burn(quota: Mapping[str, Any]) -> list[Burn]:
    """L-7: every live quota record, by connection, with how much of it is used."""
    lines = sorted(quota.get("quotas", []), key=lambda q: (q["connection"], q["alias"], q["metric"]))
    return [Burn(q["connection"], q["alias"], q["metric"], q["window"], q["left"], q["of"],
                 str(q["resets"] or "")[:16], q["source"]) for q in lines]


def secret_state(value: bool | None) -> str:
    """A secret is shown as set or not set, never shown (H-D4)."""
    return "unknown" if value is None else ("set" if value else "not set")


def info_rows(status: Mapping[str, Any], python: str) -> list[tuple[str, str]]:
    """H-D4's Info: what this gateway is and what the bench holds, from `/api/status`."""
    onboarding = status.get("onboarding") or {}
    jobs = ", ".join(job for job, on in (status.get("scheduler_jobs") or {}).items() if on) or "none"
    return [
        ("Version", str(status["version"])), ("Python", python), ("Gateway URL", str(status["gateway"])),
        ("Data folder", str(status["data"])),
        ("Chat models", str(status["models"])), ("Decision models", str(status["decision_models"])),
        ("Retired models", str(status["retired"])), ("Collections", str(status["collections"])),
        ("Endpoints", f"{status['endpoints']} (default: {status.get('default_endpoint') or 'none'})"),
        ("Scheduler", f"{status['scheduler']}; jobs on: {jobs}"),
        ("Onboarding", f"{'running' if onboarding.get('running') else 'idle'}, {onboarding.get('items', 0)} "
                       "in the batch"),
        ("Admin login", "required (a token is set)" if status.get("auth") else "open (no token set)"),
        ("Gateway keys", "required" if status.get("keys_required") else "not required"),
    ]
