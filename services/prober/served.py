"""HL-4's served check as a diff: which registered models an endpoint's listing lacks, and since when. Pure.

An endpoint that could not be listed keeps its models as present (unless it is the default endpoint: then
the check is abandoned and no snapshot is taken). A model missing again keeps the first day it was missed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from shared.config_state import ConfigState
from shared.events import MissingModel


def missing_models(state: ConfigState, listings: Mapping[str, set[str]], previous: list[MissingModel],
                   now: datetime) -> list[MissingModel]:
    """Registered models absent from their (listed) endpoint's list, each with when it was first missed."""
    before = {(m.endpoint, m.served): m.since for m in previous}
    return [
        MissingModel(endpoint=m.endpoint, served=m.served, alias=m.alias,
                     since=before.get((m.endpoint, m.served), now))
        for m in state.models.values()
        if m.endpoint in listings and m.served not in listings[m.endpoint]
    ]


def gone_message(missing: MissingModel) -> str:
    return (f"{missing.alias} ({missing.served}) is missing from {missing.endpoint}'s model list since "
            f"{missing.since:%Y-%m-%d}")
