"""HL-4's diff: a registered model its endpoint's list lacks is missing since the first check that missed
it; an endpoint that could not be listed keeps its models as present."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.prober.served import gone_message, missing_models
from shared.config_state import ConfigState
from shared.events import EndpointSaved, MissingModel, ModelRegistered

NOW = datetime(2026, 1, 5, 8, tzinfo=UTC)


def bench() -> ConfigState:
    state = ConfigState()
    for name in ("a", "b"):
        state.apply(EndpointSaved(id=f"cfg:{name}", name=name, base=f"http://127.0.0.1:1/{name}"))
    for alias, endpoint in (("kept", "a"), ("gone", "a"), ("elsewhere", "b")):
        state.apply(ModelRegistered(id=f"cfg:{alias}", alias=alias, served=f"v/{alias}", endpoint=endpoint))
    return state


def test_missing_models_keep_the_day_they_were_first_missed() -> None:
    first = missing_models(bench(), {"a": {"v/kept"}}, [], NOW)  # b could not be listed
    assert [(m.alias, m.since) for m in first] == [("gone", NOW)]
    later = missing_models(bench(), {"a": {"v/kept"}, "b": {"v/elsewhere"}}, first, NOW + timedelta(days=1))
    assert [(m.alias, m.since) for m in later] == [("gone", NOW)]
    back = missing_models(bench(), {"a": {"v/kept", "v/gone"}}, later, NOW + timedelta(days=2))
    assert back == []
    assert gone_message(MissingModel(endpoint="a", served="v/gone", alias="gone", since=NOW)) == (
        "gone (v/gone) is missing from a's model list since 2026-01-05")
