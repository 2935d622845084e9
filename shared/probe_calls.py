"""A probe call (HL-2, HL-5's confirming call, HL-6's retry): the prompts, the kinds and the `SeatCall` the
callers run, shared by the prober (scheduled probes) and the gateway (`/api/retry`). Pure.

Call ids are `<run>.<kind><8 hex of the alias>`: the run id names what asked (a job and its due time, or a
retry), so a run taken over after a replica died asks the same calls again, and the callers' work queue
and the stream's duplicate window (and, past it, the completion already in the stream) keep each one a
single call.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.commands import Msg, SeatCall
from shared.config_state import ConfigState
from shared.events import ModelRegistered
from shared.ids import digest

TINY_PROMPT = "Reply with exactly one word: ready"
PROBE_TIMEOUT_S = 90.0
# HL-2's large prompt: a config file to summarise (400 lines), so throughput is measured on real output.
LARGE_PROMPT = "Summarise what this configuration sets up, in five bullet points:\n" + "\n".join(
    f"service_{i // 8}.setting_{i % 8} = {'on' if i % 3 else 'off'}  # line {i}" for i in range(400)
)


# HL-3: a question only a tool can answer, with the one tool that can.
TOOLS_PROMPT = "What is the weather in Oslo right now? Use the tool you have."
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "The current weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
REASONING_PROMPT = ("A bat and a ball cost $1.10 in total. The bat costs $1.00 more than the ball. How many "
                    "cents does the ball cost? Think it through, then reply with the number only.")


@dataclass(frozen=True)
class ProbeKind:
    code: str  # one letter in the call id
    seat: str  # the seat label, which the ledger's probes table reads as the kind
    prompt: str
    max_tokens: int
    extra: tuple[tuple[str, object], ...] = ()  # further request options (the tools probe's tool)


TINY = ProbeKind("t", "probe tiny", TINY_PROMPT, 16)
LARGE = ProbeKind("l", "probe large", LARGE_PROMPT, 400)
RETRY = ProbeKind("r", "probe retry", TINY_PROMPT, 16)
CONFIRM = ProbeKind("c", "probe confirm", TINY_PROMPT, 16)
TOOLS = ProbeKind("x", "probe tools", TOOLS_PROMPT, 200,
                  (("tools", [WEATHER_TOOL]), ("tool_choice", "auto")))
REASONING = ProbeKind("q", "probe reasoning", REASONING_PROMPT, 2000)


def probe_call(state: ConfigState, run: str, model: ModelRegistered, kind: ProbeKind, now: float,
               sample: int = 0, task: str = "") -> SeatCall:
    endpoint = state.endpoints[model.endpoint]
    tag = f"{kind.code}{sample or ''}{digest(model.alias, size=8)}"
    return SeatCall(
        call=f"{run}.{tag}", panel=run, seat=kind.seat, alias=model.alias, served=model.served,
        endpoint=model.endpoint, base=endpoint.base, api=endpoint.api, headers=dict(endpoint.headers),
        connection=state.connection_of(model.alias), task=task, purpose="probe",
        messages=[Msg(role="user", content=kind.prompt)],
        options={"max_tokens": kind.max_tokens, **dict(kind.extra)},
        deadline=now + PROBE_TIMEOUT_S, timeout_s=PROBE_TIMEOUT_S, retries=0, config_seq=state.seq,
    )
