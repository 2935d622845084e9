"""The seater's reusable route seatings, kept by the gateway: a conversation's next turns skip a round trip.

The seater stays the one place that decides. It marks a seating reusable only when it was made without the
rotation or a draw (the conversation's model kept first, nobody too small), and says up to which request
size it holds. Such a decision is a function of: the collection, the configuration (its sequence), whether
the request has tools, whether it has images, the conversation's model and previous order, and the size
(within `fits_up_to`). Those are this cache's key; a new configuration changes the key, so nothing decided
on an older one is ever served. A ranked seating (a new conversation, or one whose model cannot take this
turn) is never kept: the rotation and the draw may answer differently every time. Pure.
"""

from __future__ import annotations

from collections import OrderedDict

from shared.commands import RouteRequest, RouteSeating

KEPT = 4096  # decisions remembered (one per live conversation and configuration, about)

Key = tuple[str, int, bool, bool, str, tuple[str, ...]]


def seating_key(request: RouteRequest) -> Key:
    """Everything a reusable seating depends on but the request's size."""
    needs = request.needs
    return (request.collection, request.config_seq, needs.tools, needs.images > 0, request.current,
            tuple(request.previous))


class SeatingCache:
    def __init__(self, size: int = KEPT) -> None:
        self.size = size
        self.kept: OrderedDict[Key, RouteSeating] = OrderedDict()

    def get(self, request: RouteRequest) -> RouteSeating | None:
        """The seater's earlier decision for this request, if it holds for it; else None (ask the seater)."""
        if not request.config_seq:  # a gateway that has not read the configuration yet: always ask
            return None
        key = seating_key(request)
        seating = self.kept.get(key)
        if seating is None:
            return None
        if seating.fits_up_to is not None and request.needs.estimate > seating.fits_up_to:
            return None
        self.kept.move_to_end(key)
        return seating

    def keep(self, request: RouteRequest, seating: RouteSeating) -> None:
        if not seating.reusable or not request.config_seq:
            return
        key = seating_key(request)
        self.kept[key] = seating
        self.kept.move_to_end(key)
        if len(self.kept) > self.size:
            self.kept.popitem(last=False)
