"""HL-7's settings on the admin API: the scheduler's mode and its per-job switches, stored as one config
event every prober folds. Pure: the rule reads a body and the folded configuration."""

from __future__ import annotations

from typing import Any

from shared.config_rules.base import Invalid, Rule, unknown_fields
from shared.config_state import ConfigState
from shared.events import ConfigEvent, SchedulerSaved
from shared.scheduled_jobs import JobName, Mode

MODES = ", ".join(m.value for m in Mode)
JOBS = ", ".join(j.value for j in JobName)


def current(state: ConfigState, fallback: str) -> tuple[Mode, list[JobName]]:
    """The settings in force: the last saved ones, else the prober's `BENCH_SCHEDULER` with every job on."""
    if state.scheduler is not None:
        return state.scheduler.mode, list(state.scheduler.off)
    try:
        return Mode(fallback), []
    except ValueError:
        return Mode.OFF, []


def view(state: ConfigState, fallback: str) -> dict[str, Any]:
    mode, off = current(state, fallback)
    saved = state.scheduler
    return {"mode": mode.value, "jobs": {job.value: job not in off for job in JobName},
            "source": "config" if saved is not None else "environment",
            "since": saved.at.isoformat() if saved is not None else None}


def save_scheduler(body: dict[str, Any], fallback: str) -> Rule:
    """`mode` and `off` (the jobs switched off; `on` switches some back); a field left out keeps its value."""

    def rule(state: ConfigState, event_id: str) -> ConfigEvent:
        errors = unknown_fields(body, ("mode", "off", "on"))
        mode, off = current(state, fallback)
        if "mode" in body:
            try:
                mode = Mode(body["mode"])
            except ValueError:
                errors.append(f'"mode" must be one of {MODES} (got {body["mode"]!r})')
        switched: dict[str, list[JobName]] = {}
        for field in ("off", "on"):
            names = body.get(field) or []
            bad = [n for n in names if n not in set(JobName)] if isinstance(names, list) else [names]
            if bad:
                errors.append(f'"{field}": no job named {", ".join(map(repr, bad))}; jobs are {JOBS}')
            else:
                switched[field] = [JobName(n) for n in names]
        both = set(switched.get("off", [])) & set(switched.get("on", []))
        if both:
            errors.append(f"{', '.join(sorted(both))} cannot be both on and off")
        if errors:
            raise Invalid(errors)
        off = [j for j in JobName if (j in off or j in switched["off"]) and j not in switched["on"]]
        return SchedulerSaved(id=event_id, mode=mode, off=off)

    return rule
