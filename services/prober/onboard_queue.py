"""The onboarding queue's one document in the `bench_onboard` bucket, changed only by `mutate`: read it with
its revision, apply a pure rule (`onboard_rules`), write with compare-and-set; a lost race reads again. A
rule raising (`Refused`, `Lost`) writes nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from services.prober.job_lease import Records
from services.prober.onboard_rules import QueueDoc

KEY = "queue"
ATTEMPTS = 50
T = TypeVar("T")


class QueueBusy(RuntimeError):
    """The document kept changing under this write (far more writers than a queue ever has)."""


class OnboardQueue:
    def __init__(self, records: Records) -> None:
        self.records = records

    async def read(self) -> QueueDoc:
        found = await self.records.get(KEY)
        return QueueDoc.model_validate_json(found[0]) if found and found[0] else QueueDoc()

    async def mutate(self, change: Callable[[QueueDoc], tuple[QueueDoc, T] | None]) -> T | None:
        """Apply `change` (new document and a result, or None to write nothing) atomically; its result."""
        for _ in range(ATTEMPTS):
            found = await self.records.get(KEY)
            doc = QueueDoc.model_validate_json(found[0]) if found and found[0] else QueueDoc()
            changed = change(doc)
            if changed is None:
                return None
            new, result = changed
            if await self.records.put(KEY, new.model_dump_json().encode(), found[1] if found else None):
                return result
        raise QueueBusy("the onboarding queue kept changing during this write; try again")
