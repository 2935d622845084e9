"""The onboarding queue's messages (O-1..O-4): what the gateway asks the probers on
`bench.rpc.prober.onboard` and what they answer. The queue itself lives in the `bench_onboard` bucket
(`services/prober/onboard_queue.py`); an item's progress is the `onboard_progress` event."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Mode = Literal["full", "quick", "quick-adhoc"]
# O-3: `no answer` is a model registered whose probe went unanswered (it stays, with an issue); `skipped`
# was stopped before its turn.
State = Literal["queued", "running", "done", "no answer", "failed", "skipped"]
FINISHED: tuple[State, ...] = ("done", "no answer", "failed", "skipped")
STEPS = 5  # O-1: listed, registered, facts, probe, suite
Action = Literal["queue", "status", "stop", "clear", "candidates", "dismiss"]
MAX_BATCH = 50


class OnboardAsk(BaseModel):
    """One model to onboard: a served id on an endpoint, in a mode (O-2)."""

    model_config = ConfigDict(extra="forbid")
    served: str = Field(max_length=400)
    endpoint: str = Field(max_length=100)
    mode: str = "full"


class OnboardItem(BaseModel):
    id: str
    served: str
    endpoint: str
    mode: Mode
    state: State = "queued"
    step: int = 0  # 0 before the first step, then 1..5 while running (the step under way)
    alias: str = ""
    note: str = ""
    attempts: int = 0  # how many prober turns took it (a turn cut short by a dead prober counts)
    queued_at: datetime
    ended_at: datetime | None = None


class OnboardIssue(BaseModel):
    """O-1: an onboarded model that stopped short (its probe went unanswered); it stays registered."""

    at: datetime
    served: str
    endpoint: str
    alias: str
    step: int
    failure: str
    detail: str = ""


class OnboardRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Action
    items: list[OnboardAsk] = Field(default_factory=list)  # `queue`
    # `dismiss`: `served` on the default endpoint, else `served@endpoint`
    keys: list[str] = Field(default_factory=list)
    undo: bool = False  # `dismiss`
    config_seq: int = 0  # the asker's config position: the prober folds that far before deciding


class Candidate(BaseModel):
    """O-4: a served model not on the bench (nor retired, nor a decision model)."""

    served: str
    endpoint: str
    key: str
    new: bool = False


class OnboardReply(BaseModel):
    running: bool = False
    stopping: bool = False
    runner: str = ""
    items: list[OnboardItem] = Field(default_factory=list)
    issues: list[OnboardIssue] = Field(default_factory=list)
    candidates: list[Candidate] = Field(default_factory=list)
    dismissed: list[Candidate] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)  # `candidates`: endpoints whose listing failed
