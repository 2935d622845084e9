"""The model string → a collection and a reply mode (P-1 steps 5 and 8).

`bench/<name>[:all|:merged|:route]`; the bare name resolves too. Any other suffix stays part of the name
(so `bench/core:both` is an unknown collection). A client that names nothing, or something unknown, is
told every collection it could have asked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from services.gateway.ask import REPLY_MODES, Ask, ReplyMode
from shared.events import CollectionSaved
from shared.refusal import Refusal

PREFIX = "bench/"


@dataclass(frozen=True)
class Resolved:
    collection: CollectionSaved
    mode: ReplyMode

    @property
    def name(self) -> str:
        return self.collection.name

    @property
    def panel_mode(self) -> Literal["all", "merged"]:
        return "merged" if self.mode == "merged" else "all"

    @property
    def canonical(self) -> str:
        """The name every reply reports (never the suffix form)."""
        return f"{PREFIX}{self.collection.name}"


def split_model(model: str) -> tuple[str, ReplyMode | None]:
    """`bench/core:merged` → (`core`, `merged`); `core` → (`core`, None)."""
    name, suffix = model.strip(), None
    for mode in REPLY_MODES:
        if name.endswith(f":{mode}"):
            name, suffix = name[: -len(mode) - 1], mode
            break
    if name.startswith(PREFIX):
        name = name[len(PREFIX) :]
    return name, suffix


def collection_line(col: CollectionSaved) -> str:
    line = f"- {PREFIX}{col.name}: {col.description or '(no description)'}"
    return f"{line} [{', '.join(col.tags)}]" if col.tags else line


def collection_list(collections: Mapping[str, CollectionSaved]) -> str:
    """Every collection as `- bench/<name>: <description> [<tags>]`, by name; or how to make one."""
    if not collections:
        return (
            "There are no collections yet: make one with "
            "`bench collection save <name> --members <alias>,...` (or POST /api/collection)."
        )
    lines = [collection_line(collections[name]) for name in sorted(collections)]
    return "Your collections:\n" + "\n".join(lines)


def resolve(ask: Ask, collections: Mapping[str, CollectionSaved]) -> Resolved:
    """P-1 (5) and (8): raises 400 for no model, 404 for an unknown collection."""
    name, suffix = split_model(ask.model)
    if not name:
        listing = collection_list(collections)
        raise Refusal(400, f'no model given: ask for a collection as "bench/<name>". {listing}')
    col = collections.get(name)
    if col is None:
        raise Refusal(404, f"no collection named '{PREFIX}{name}'. {collection_list(collections)}")
    mode: ReplyMode = ask.reply or suffix or col.reply or "all"
    return Resolved(collection=col, mode=mode)


def refuse_agentic(ask: Ask, resolved: Resolved) -> None:
    """P-1 (9), X-1: a panel cannot run an agent's turn; route mode can."""
    if ask.agentic and resolved.mode != "route":
        raise Refusal(
            400,
            f"{resolved.canonical} answers as a panel, which cannot carry {ask.agentic}. For agents use "
            f'route mode: ask for "{resolved.canonical}:route" or send "bench": {{"reply": "route"}}.',
        )
