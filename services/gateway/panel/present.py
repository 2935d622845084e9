"""How a reply mode turns a panel's progress into reply text. Pure.

A presenter gives the text piece for each step of a panel (streamed replies write them as they come) and
the whole answer once the panel is done (plain replies). `all` mode streams the heading, each seat's
section as it lands, then the footer (S-4); a mode that answers only at the end (merged) gives empty
pieces until then.
"""

from __future__ import annotations

from typing import Any, Protocol

from services.gateway.formats.base import Answer
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
