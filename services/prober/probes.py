"""Whom a scheduled probe asks (HL-2, HL-3): the models, the run id of a job's due time, the pacing groups,
the samples, and which capabilities the answers showed. The calls themselves are `shared.probe_calls`.
Pure."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from shared.commands import SeatCall
from shared.config_state import ConfigState
from shared.events import ModelRegistered, SeatCompleted
from shared.probe_calls import REASONING, TOOLS, probe_call

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


def capabilities_found(state: ConfigState, answers: Iterable[SeatCompleted]) -> dict[str, set[str]]:
    """HL-3: per alias, the capabilities its answers showed and it is not yet known for: `tools` when the
    tools probe came back with a tool call, `reasoning` when the reasoning question was reasoned over."""
    found: dict[str, set[str]] = {}
    for answer in answers:
        shown = ((answer.seat == TOOLS.seat and answer.tool_calls > 0 and "tools")
                 or (answer.seat == REASONING.seat and answer.status == "ok" and answer.reasoning_tokens > 0
                     and "reasoning"))
        if shown and shown not in state.learned.get(answer.alias, set()):
            found.setdefault(answer.alias, set()).add(shown)
    return found


def capability_calls(state: ConfigState, run: str, now: float, task: str) -> list[SeatCall]:
    """A tools call for each model on a chat endpoint (the tool is in OpenAI's shape), and a reasoning
    question for each model."""
    calls = []
    for model in probed_models(state):
        if state.endpoints[model.endpoint].api == "chat":
            calls.append(probe_call(state, run, model, TOOLS, now, task=task))
        calls.append(probe_call(state, run, model, REASONING, now, task=task))
    return calls
