"""Whom a scheduled probe asks (HL-2): the models, the run id of a job's due time, the pacing groups and
the samples. The calls themselves are `shared.probe_calls`. Pure."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from shared.commands import SeatCall
from shared.config_state import ConfigState
from shared.events import ModelRegistered

NOT_PROBED_ROLES = ("decision", "image")


def run_id(job: str, due: datetime) -> str:
    """`pr<YYYYMMDD>-<HHMMSS>-<job>` (UTC): one id per job and due time."""
    return f"pr{due:%Y%m%d-%H%M%S}-{job}"


def probed_models(state: ConfigState) -> list[ModelRegistered]:
    """HL-2: every registered model that is not ad hoc, on an endpoint that exists, that chats."""
    return [m for m in state.models.values()
            if not m.ad_hoc and m.role not in NOT_PROBED_ROLES and m.endpoint in state.endpoints]


def by_connection(calls: Iterable[SeatCall]) -> dict[str, list[SeatCall]]:
    """Calls grouped per connection, in order: each group is asked one call at a time (paced), groups
    side by side."""
    groups: dict[str, list[SeatCall]] = {}
    for call in calls:
        groups.setdefault(call.connection, []).append(call)
    return groups


def samples(model: ModelRegistered) -> int:
    """HL-2 perf: 3 samples per prompt, 1 for `:free` models."""
    return 1 if model.served.endswith(":free") else 3
