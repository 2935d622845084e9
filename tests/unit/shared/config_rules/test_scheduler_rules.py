"""HL-7's settings on the admin API: stored as one config event; a bad mode or job is refused with the
valid ones listed; a field left out keeps its value."""

from __future__ import annotations

import pytest

from shared.config_rules.base import Invalid
from shared.config_rules.scheduler import save_scheduler, view
from shared.config_state import ConfigState
from shared.events import SchedulerSaved


def saved(state: ConfigState, body: dict[str, object], fallback: str = "off") -> SchedulerSaved:
    event = save_scheduler(body, fallback)(state, "cfg:s")
    assert isinstance(event, SchedulerSaved)
    state.apply(event)
    return event


def test_run_with_perf_off_is_stored_and_read_back() -> None:
    state = ConfigState()
    shown = view(state, "log-only")
    assert (shown["mode"], shown["source"]) == ("log-only", "environment")
    saved(state, {"mode": "run", "off": ["perf"]})
    shown = view(state, "off")
    assert (shown["mode"], shown["source"]) == ("run", "config")
    assert shown["jobs"]["perf"] is False and shown["jobs"]["availability"] is True
    saved(state, {"off": ["capabilities"]})  # the mode kept, perf still off
    assert (state.scheduler.mode, state.scheduler.off) == ("run", ["perf", "capabilities"])  # type: ignore[union-attr]
    saved(state, {"on": ["perf"]})
    assert state.scheduler.off == ["capabilities"]  # type: ignore[union-attr]


def test_a_bad_mode_or_job_is_refused_with_the_valid_ones_listed() -> None:
    with pytest.raises(Invalid) as caught:
        save_scheduler({"mode": "daily", "off": ["perfs"], "colour": 1}, "off")(ConfigState(), "cfg:x")
    text = " | ".join(caught.value.errors)
    assert "off, log-only, run" in text and "'daily'" in text
    assert "'perfs'" in text and "availability, catalog, suite-free, deprecations, perf, capabilities" in text
    assert "unknown field(s): colour" in text
