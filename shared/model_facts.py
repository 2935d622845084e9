"""A model's facts (SPEC C-15) and how its layers add up to the facts every service acts on (CAT-1).

Each fact carries where it came from: a catalog feed (`openrouter`, `models.dev`, `freellmapi`, the
endpoint's own `listing`), `registration` (typed at `bench model add`), `learned <date>` (a provider's
error named a smaller window), `probe <date>` (a probe saw the capability) or `you` (`bench model set`).
Layers, low to high: catalog, registration, learned and probed, the user's overrides. A learned window
only ever lowers a window; a probe only ever says yes; the user's value wins per field. Unknown is None,
distinct from False. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveInt

FactName = Literal["context_window", "max_output", "tools", "vision", "structured_output", "reasoning",
                   "cost", "knowledge_cutoff"]
FACT_NAMES: tuple[str, ...] = get_args(FactName)
CAPABILITIES = ("tools", "vision", "structured_output", "reasoning")
CUTOFF_RE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$")  # a month or a day
USER = "you"
REGISTRATION = "registration"


class Cost(BaseModel):
    """US dollars per million tokens, as the feeds quote them (C-15)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    input: NonNegativeFloat
    output: NonNegativeFloat

    @property
    def free(self) -> bool:
        return self.input == 0 and self.output == 0


class ModelFacts(BaseModel):
    """Facts about one model, any of them unknown (None); `sources` names where each known one came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    context_window: PositiveInt | None = None
    max_output: PositiveInt | None = None
    tools: bool | None = None
    vision: bool | None = None
    structured_output: bool | None = None
    reasoning: bool | None = None
    cost: Cost | None = None
    knowledge_cutoff: str | None = None  # as the feed says it: `2024-10`, `2024-10-01`
    sources: dict[str, str] = Field(default_factory=dict)

    def known(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in FACT_NAMES if getattr(self, name) is not None}

    def source_of(self, name: str, default: str) -> str:
        return self.sources.get(name, default)


def stamped(values: Mapping[str, object], source: str) -> ModelFacts:
    """Facts from one place: every value given (None left out) with that source."""
    known = {k: v for k, v in values.items() if v is not None}
    return ModelFacts.model_validate({**known, "sources": dict.fromkeys(known, source)})


def overlay(low: ModelFacts, high: ModelFacts, default: str) -> ModelFacts:
    """`high`'s known values over `low`'s, each with its own source (`default` where none is named)."""
    values = {**low.known(), **high.known()}
    sources = {name: (high if name in high.known() else low).source_of(name, default) for name in values}
    return ModelFacts.model_validate({**values, "sources": sources})


class FactLayers(BaseModel):
    """Everything known about one model, layer by layer; `effective()` is what the bench acts on."""

    model_config = ConfigDict(extra="forbid")
    catalog: ModelFacts = Field(default_factory=ModelFacts)
    registration: ModelFacts = Field(default_factory=ModelFacts)
    learned_window: PositiveInt | None = None
    learned_on: date | None = None
    probed: dict[str, str] = Field(default_factory=dict)  # capability → `probe <date>`
    user: ModelFacts = Field(default_factory=ModelFacts)

    def learn_window(self, window: int, on: date) -> bool:
        """L-3: keep a window a provider stated only when lower than the one learned before."""
        if self.learned_window is not None and window >= self.learned_window:
            return False
        self.learned_window, self.learned_on = window, on
        return True

    def effective(self) -> ModelFacts:
        facts = overlay(self.catalog, self.registration, REGISTRATION)
        values, sources = facts.known(), dict(facts.sources)
        known_window = facts.context_window
        if self.learned_window is not None and (known_window is None or self.learned_window < known_window):
            values["context_window"] = self.learned_window
            sources["context_window"] = f"learned {self.learned_on}" if self.learned_on else "learned"
        for capability, source in self.probed.items():
            values[capability], sources[capability] = True, source
        for name, value in self.user.known().items():
            values[name], sources[name] = value, USER
        return ModelFacts.model_validate({**values, "sources": {n: sources[n] for n in values}})


def with_user(user: ModelFacts, changed: ModelFacts, clear: list[str]) -> ModelFacts:
    """The user's overrides after `bench model set`: the fields named in `clear` go (the layers below show
    through again), then the values given replace theirs."""
    kept = {name: value for name, value in user.known().items() if name not in clear}
    return stamped({**kept, **changed.known()}, USER)
