"""The free-tier guard (SPEC U-5): a model whose served id has an active `went paid` alert is not called,
unless connections.json's `allow_paid` names it (alias or served id) or the caller runs with
`BENCH_ALLOW_PAID=1`. Checked before pacing, so a held call takes no slot and sends nothing. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.caller.outcome import CallOutcome, client_failed
from shared.alerts import paid_hold
from shared.config_state import ConfigState

HOLDS = "not sent: the free-tier guard holds"
MESSAGE_MAX = 300


def guard_refusal(state: ConfigState, alias: str, served: str, allow_all: bool = False) -> str | None:
    """The refusal text when the guard holds this model, else None (the hold is `paid_hold`, shared with the
    seater, which does not pick a held model as an explorer)."""
    alert = None if allow_all else paid_hold(state.alerts, state.allow_paid, alias, served)
    return None if alert is None else f"{HOLDS} {alias} (payment required: {alert.message[:MESSAGE_MAX]})"


def is_held(error: str) -> bool:
    """Whether a call's error is the guard's (it sent nothing, so it teaches nothing about limits)."""
    return error.startswith(client_failed(HOLDS).error)


@dataclass(frozen=True)
class PaidGuard:
    """The guard over the caller's folded configuration (a live view: alerts apply as they are folded)."""

    config: ConfigState
    allow_all: bool = False

    def holds(self, alias: str, served: str) -> CallOutcome | None:
        why = guard_refusal(self.config, alias, served, self.allow_all)
        return None if why is None else client_failed(why)
