"""How a reply mode turns a panel's progress into reply text. Pure.

A presenter gives the text piece for each step of a panel (streamed replies write them as they come) and
the whole answer once the panel is done (plain replies). `all` mode streams the heading, each seat's
section as it lands, then the footer (S-4); merged mode answers only at the end, in one piece.
"""

from __future__ import annotations

from typing import Any, Protocol

from services.gateway.formats.base import Answer
from services.gateway.panel.merge import merge_fields, merged_text
from services.gateway.panel.progress import Finished, Landed, Seated
from services.gateway.panel.text import FOOTER, bench_object, canonical_name, full_text, head, section


class Presenter(Protocol):
    def seated(self, update: Seated) -> str: ...

    def landed(self, update: Landed) -> str: ...

    def finished(self, update: Finished) -> tuple[str, dict[str, Any]]:
        """The last piece and the `bench` object."""
        ...

    def answer(self, update: Finished) -> Answer: ...


class AllMode:
    """P-13/P-14: every seat's answer side by side."""

    def seated(self, update: Seated) -> str:
        return head(update.plan)

    def landed(self, update: Landed) -> str:
        return "\n" + section(update.seat, update.done)

    def finished(self, update: Finished) -> tuple[str, dict[str, Any]]:
        return "\n" + FOOTER, bench_object(update.plan, update.results)

    def answer(self, update: Finished) -> Answer:
        return Answer(
            collection=canonical_name(update.plan.collection),
            content=full_text(update.plan, update.results),
            bench=bench_object(update.plan, update.results),
        )


class MergedMode:
    """P-15: one merged answer, or every answer after a note. S-4: one piece at the end, none per seat."""

    def seated(self, update: Seated) -> str:
        return ""

    def landed(self, update: Landed) -> str:
        return ""

    def finished(self, update: Finished) -> tuple[str, dict[str, Any]]:
        answer = self.answer(update)
        return answer.content, answer.bench

    def answer(self, update: Finished) -> Answer:
        assert update.merge is not None, "a merged panel finishes with its merge"
        return Answer(
            collection=canonical_name(update.plan.collection),
            content=merged_text(update.plan, update.results, update.merge),
            bench={**bench_object(update.plan, update.results), **merge_fields(update.merge)},
        )


PRESENTERS: dict[str, type[AllMode] | type[MergedMode]] = {"all": AllMode, "merged": MergedMode}
