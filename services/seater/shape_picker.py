"""The shape picker (SPEC P-4, C-9): a decision model names a request's shape, which decides the roles that
may fill its explorer seats. Pure: when the picker is asked, the call that asks it, and what its answer
means. The seater's transport queues the call for the callers (keys and pacing stay there) and waits at
most `PICK_TIMEOUT_S`; silence, an error or nonsense fall back to `general`, as without a picker.

A decision model is asked over chat completions on its endpoint, for one JSON object naming a choice and a
confidence: the bench has no Decisions API client, and a chat reply is what every endpoint speaks.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

from services.seater.planning import explorer_seats_of, saved_collection
from services.seater.shapes import Picked
from shared.commands import PICK_TEXT_LIMIT, PICK_TIMEOUT_S, Msg, PlanRefusal, PlanRequest, SeatCall
from shared.config_state import ConfigState
from shared.events import ModelRegistered, SeatCompleted

# The choices and their one-line descriptions, in the order P-4 lists them.
CHOICES: dict[str, str] = {
    "general": "anything that fits no other shape: questions, explanations, advice",
    "design": "designing a system, an API or a plan: trade-offs between approaches",
    "prose": "writing or editing text meant for people: letters, articles, stories",
    "review": "reviewing existing code or text for faults",
    "code": "writing, changing or debugging code",
    "enumeration": "listing or collecting many items: names, ideas, options, facts",
    "quick": "a short factual question or a small transformation with one right answer",
}
MIN_CONFIDENCE = 0.6
PICK_SEAT = "shape"
JSON_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)


def due(request: PlanRequest, config: ConfigState) -> ModelRegistered | None:
    """The picker, when P-4 reaches it for this request: the collection exists and has no shape, the request
    carries no images, the panel has explorer seats to fill, and the asker sent the text (it sends none when
    its own configuration knew no picker, and then waits no longer than for any plan)."""
    col = saved_collection(request.collection, config)
    if isinstance(col, PlanRefusal) or col.shape or request.has_images or not request.text:
        return None
    if not explorer_seats_of(col, config):
        return None
    return config.decision_model()


def question(text: str) -> list[Msg]:
    options = "\n".join(f"- {name}: {about}" for name, about in CHOICES.items())
    ask = (
        "Which shape is the request below? Choose one of:\n"
        f"{options}\n\n"
        'Answer with one JSON object and nothing else: {"choice": "<shape>", "confidence": <0 to 1>}.\n\n'
        f"The request:\n{text[:PICK_TEXT_LIMIT]}"
    )
    return [Msg(role="user", content=ask)]


def pick_call(call: str, model: ModelRegistered, config: ConfigState, text: str, now: datetime) -> SeatCall:
    """The question as a seat call of purpose `decision` (a provider call, never an offload)."""
    endpoint = config.endpoints[model.endpoint]
    return SeatCall(
        call=call, panel=call.rsplit(".", 1)[0], seat=PICK_SEAT, alias=model.alias, served=model.served,
        endpoint=endpoint.name, base=endpoint.base, api=endpoint.api, headers=dict(endpoint.headers),
        connection=config.connection_of(model.alias), task="shape of a request (P-4)", purpose="decision",
        messages=question(text), deadline=now.timestamp() + PICK_TIMEOUT_S, timeout_s=PICK_TIMEOUT_S,
        retries=0, options={"max_tokens": model.max_tokens} if model.max_tokens else {},
        config_seq=config.seq,
    )


def read_answer(alias: str, done: SeatCompleted | None, waited_s: float) -> Picked:
    """P-4: the choice, when it is one of `CHOICES` at a confidence of at least `MIN_CONFIDENCE`; else
    `general`, saying whether the picker was unsure or failed (no answer, an error, no such JSON)."""
    if done is None:
        return Picked("general", f"{alias} failed (no answer in {waited_s:g}s)")
    if done.status != "ok":
        return Picked("general", f"{alias} failed ({(done.error or done.status)[:120]})")
    found = _choice(done.answer)
    if found is None:
        return Picked("general", f"{alias} failed (no choice in its answer: {done.answer[:60]!r})")
    choice, confidence = found
    if choice in CHOICES and confidence >= MIN_CONFIDENCE:
        return Picked(choice, f"{alias}, {confidence:g}")
    return Picked("general", f"{alias} unsure ({choice[:40]} at {confidence:g})")


def _choice(answer: str) -> tuple[str, float] | None:
    """The first JSON object in the answer with a string `choice` and a number `confidence` in [0, 1]."""
    for match in JSON_OBJECT.finditer(answer):
        try:
            data = json.loads(match.group(0))
        except ValueError:
            continue
        choice, confidence = data.get("choice"), data.get("confidence")
        number = isinstance(confidence, int | float) and not isinstance(confidence, bool)
        if isinstance(choice, str) and number and 0.0 <= confidence <= 1.0:
            return choice.strip().lower(), float(confidence)
    return None
