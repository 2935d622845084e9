"""Shapes of a request and the model roles each admits as an explorer (SPEC C-7)."""

from __future__ import annotations

from typing import NamedTuple

SHAPE_ROLES: dict[str, frozenset[str]] = {
    "general": frozenset({"general"}),
    "design": frozenset({"general"}),
    "prose": frozenset({"general"}),
    "review": frozenset({"general", "code"}),
    "code": frozenset({"general", "code"}),
    "enumeration": frozenset({"general", "code", "light"}),
    "quick": frozenset({"general", "light"}),
    "vision": frozenset({"general", "light", "vision"}),
    "image": frozenset({"image"}),
}

# `image` is an image generator's shape: no collection may use it.
COLLECTION_SHAPES = tuple(s for s in SHAPE_ROLES if s != "image")


def admits(shape: str, role: str) -> bool:
    return role in SHAPE_ROLES.get(shape, frozenset())


class Picked(NamedTuple):
    """The shape a request was given and why (SPEC P-4's `shape_by`)."""

    shape: str
    by: str
