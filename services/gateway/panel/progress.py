"""What a running panel tells the request that asked for it, in order: seated, each seat as it lands,
then finished (with the merge, in merged mode) or failed. A streamed reply writes each as it comes; a plain
reply waits for the end."""

from __future__ import annotations

from dataclasses import dataclass

from services.gateway.panel.merge import Merge
from services.gateway.updates import Failed
from shared.commands import Plan
from shared.events import SeatCompleted, SeatPlan


@dataclass(frozen=True)
class Seated:
    plan: Plan


@dataclass(frozen=True)
class Landed:
    seat: SeatPlan
    done: SeatCompleted


@dataclass(frozen=True)
class Finished:
    plan: Plan
    results: dict[str, SeatCompleted]  # call id → the completion the event stream holds
    merge: Merge | None = None  # merged mode only


Update = Seated | Landed | Finished | Failed
