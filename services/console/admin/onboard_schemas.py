"""The onboarding routes' bodies (O-3, O-4), as the OpenAPI schema documents them; the probers check what
they mean (endpoints that exist, served ids listed, nothing queued twice) and list every reason."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from services.console.admin.schemas import Body, Ok
from shared.onboarding import Candidate, OnboardIssue, OnboardItem

MODES = ("full", "quick", "quick-adhoc")


class OnboardBody(Body):
    served: str = Field(min_length=1, max_length=200, pattern=r"^[\w./:@+-]+$",
                        description="the id the endpoint serves")
    endpoint: str = Field(min_length=1, max_length=100)
    mode: str = Field(default="full", json_schema_extra={"enum": list(MODES)})


class OnboardQueueBody(Body):
    items: list[OnboardBody] = Field(min_length=1, max_length=50)


Key = Annotated[str, Field(min_length=1, max_length=400)]


class DismissBody(Body):
    served: Key | Annotated[list[Key], Field(min_length=1, max_length=200)] = Field(
        description="a candidate key (`served`, or `served@endpoint` off the default endpoint), or several")
    undo: bool = False


class OnboardReplyBody(Ok):
    running: bool
    stopping: bool
    runner: str
    items: list[OnboardItem]
    issues: list[OnboardIssue]
    candidates: list[Candidate]
    dismissed: list[Candidate]
    errors: list[str]


