"""What a probe asks and of whom (HL-2 availability and perf, HL-6 retry): the models, the prompts, the call
ids and the `SeatCall`s the callers run. Pure.

Call ids are `<run>.<kind><8 hex of the alias>`: the run id names the job and its due time, so a run taken
over after a replica died asks the same calls again, and the callers' work queue and the stream's
duplicate window (and, past it, the completion already in the stream) keep each one a single call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from shared.commands import Msg, SeatCall
from shared.config_state import ConfigState
from shared.events import ModelRegistered
from shared.ids import digest

TINY_PROMPT = "Reply with exactly one word: ready"
PROBE_TIMEOUT_S = 90.0
NOT_PROBED_ROLES = ("decision", "image")
# HL-2's large prompt: a config file to summarise (400 lines), so throughput is measured on real output.
LARGE_PROMPT = "Summarise what this configuration sets up, in five bullet points:\n" + "\n".join(
    f"service_{i // 8}.setting_{i % 8} = {'on' if i % 3 else 'off'}  # line {i}" for i in range(400)
)


@dataclass(frozen=True)
class ProbeKind:
    code: str  # one letter in the call id
    seat: str  # the seat label, which the ledger's probes table reads as the kind
    prompt: str
    max_tokens: int


TINY = ProbeKind("t", "probe tiny", TINY_PROMPT, 16)
LARGE = ProbeKind("l", "probe large", LARGE_PROMPT, 400)
RETRY = ProbeKind("r", "probe retry", TINY_PROMPT, 16)
CONFIRM = ProbeKind("c", "probe confirm", TINY_PROMPT, 16)


def run_id(job: str, due: datetime) -> str:
    """`pr<YYYYMMDD>-<HHMMSS>-<job>` (UTC): one id per job and due time."""
    return f"pr{due:%Y%m%d-%H%M%S}-{job}"


def probed_models(state: ConfigState) -> list[ModelRegistered]:
    """HL-2: every registered model that is not ad hoc, on an endpoint that exists, that chats."""
    return [m for m in state.models.values()
            if not m.ad_hoc and m.role not in NOT_PROBED_ROLES and m.endpoint in state.endpoints]


def probe_call(state: ConfigState, run: str, model: ModelRegistered, kind: ProbeKind, now: float,
               sample: int = 0, task: str = "") -> SeatCall:
    endpoint = state.endpoints[model.endpoint]
    tag = f"{kind.code}{sample or ''}{digest(model.alias, size=8)}"
    return SeatCall(
        call=f"{run}.{tag}", panel=run, seat=kind.seat, alias=model.alias, served=model.served,
        endpoint=model.endpoint, base=endpoint.base, api=endpoint.api, headers=dict(endpoint.headers),
        connection=state.connection_of(model.alias), task=task, purpose="probe",
        messages=[Msg(role="user", content=kind.prompt)], options={"max_tokens": kind.max_tokens},
        deadline=now + PROBE_TIMEOUT_S, timeout_s=PROBE_TIMEOUT_S, retries=0, config_seq=state.seq,
    )


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
