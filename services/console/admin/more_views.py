"""The admin API's views of models (with their status), limits, gateway keys and the status page (H-D2).
Pure: functions of the configuration fold and what the caller passes in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from datetime import datetime
from typing import Any

from services.console.admin.views import fields
from shared.alerts import retiring
from shared.config_rules.limits import chat_connections
from shared.config_state import LIMIT_AXES, ConfigState
from shared.events import LimitsSaved, ModelRegistered

Cooldowns = Mapping[str, tuple[datetime, str]]  # alias → (until, why)
Probes = Mapping[str, dict[str, Any]]  # alias → its latest probe: {at, answered, failure}


def model_row(
    model: ModelRegistered, state: ConfigState, cooldowns: Cooldowns, now: datetime, probes: Probes
) -> dict[str, Any]:
    """Its status, first that applies: retiring (its alert, with when), cooling (a rate limit's rest),
    failing or healthy (its latest probe), untested."""
    last = probes.get(model.alias)
    row = {**fields(model), "kind": "decision" if model.role == "decision" else "chat",
           "connection": state.connection_of(model.alias), "retired": False, "last_probe": last}
    rest = cooldowns.get(model.alias)
    pending = retiring(state.alerts, model.served)
    if pending is not None:
        row.update(status="retiring", why=f"{pending.message}; {pending.action}".rstrip("; "))
    elif rest is not None and rest[0] > now:
        row.update(status="cooling", why=f"resting after a rate limit until {rest[0]:%Y-%m-%d %H:%M} UTC"
                   + (f": {rest[1]}" if rest[1] else ""))
    elif last is not None and not last["answered"]:
        row.update(status="failing", why=f"its latest probe failed ({last['failure']}) at {last['at']}")
    elif last is not None:
        row.update(status="healthy", why=f"answered its latest probe at {last['at']}")
    else:
        row.update(status="untested", why="no probe has run yet")
    return row


def models(state: ConfigState, cooldowns: Cooldowns, now: datetime, probes: Probes) -> list[dict[str, Any]]:
    rows = [model_row(m, state, cooldowns, now, probes) for m in state.models.values()]
    for alias, record in state.retired.items():
        model = record.model
        rows.append({
            **fields(model), "alias": alias, "kind": "decision" if model.role == "decision" else "chat",
            "connection": model.endpoint, "retired": True, "status": "retired", "why": record.why,
            "retired_at": record.at, "retired_why": record.why, "retired_from": record.collections,
        })
    return rows


def limits_of(saved: LimitsSaved | None) -> dict[str, int | None]:
    return {axis: getattr(saved, axis, None) if saved else None for axis in LIMIT_AXES}


def connections(state: ConfigState) -> dict[str, Any]:
    return {
        "keys": list(LIMIT_AXES),
        "connections": [
            {"name": name, "models": aliases, "limits": limits_of(state.connection_limits.get(name))}
            for name, aliases in sorted(chat_connections(state).items())
        ],
        "models": [
            {"alias": alias, "limits": limits_of(saved)}
            for alias, saved in sorted(state.model_limits.items())
        ],
    }


def alerts(state: ConfigState) -> list[dict[str, Any]]:
    """C-16: every active alert, the most recently seen first."""
    rows = sorted(state.alerts.values(), key=lambda a: (a.last_seen, a.key), reverse=True)
    return [asdict(alert) for alert in rows]


def key_rows(state: ConfigState, last_used: Mapping[str, str | None]) -> list[dict[str, Any]]:
    """Never the key or its hash."""
    keys = sorted(state.gateway_keys.values(), key=lambda k: k.name)
    return [{"name": k.name, "hint": k.hint, "collections": k.collections, "rpm": k.rpm, "created": k.at,
             "last_used": last_used.get(k.name)} for k in keys]


def status(state: ConfigState, *, version: str, gateway: str, data: str, scheduler: str,
           jobs: dict[str, bool], auth: bool, keys_required: bool) -> dict[str, Any]:
    chat = [m for m in state.models.values() if m.role != "decision"]
    return {
        "version": version, "gateway": gateway, "data": data, "models": len(chat),
        "decision_models": len(state.models) - len(chat), "retired": len(state.retired),
        "collections": len(state.collections), "endpoints": len(state.endpoints),
        "default_endpoint": state.default_endpoint(), "client": "builtin", "scheduler": scheduler,
        "scheduler_jobs": jobs, "auth": auth, "keys_required": keys_required,
        "gateway_keys": len(state.gateway_keys), "onboarding": {"running": False, "items": 0},
        "config_seq": state.seq,
    }
