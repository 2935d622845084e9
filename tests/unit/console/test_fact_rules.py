"""C-15: `POST /api/model/facts` (`bench model set`): what it may say, every reason at once."""

from __future__ import annotations

from typing import Any

import pytest

from services.console.admin.changelog import ChangeLog
from shared.config_rules.base import Invalid
from shared.config_rules.facts import facts_view, set_facts
from shared.events import ModelFactsSet
from tests.unit.factories import config, endpoint, model


def written(body: dict[str, Any]) -> ModelFactsSet:
    event = set_facts(body)(config(endpoint(), model("m")), "cfg:x")
    assert isinstance(event, ModelFactsSet)
    return event


def refusal(body: dict[str, Any]) -> Invalid:
    with pytest.raises(Invalid) as refused:
        set_facts(body)(config(endpoint(), model("m")), "cfg:x")
    return refused.value


def test_facts_and_clears_become_one_event() -> None:
    event = written({"alias": "m", "context_window": 32_000, "tools": True, "cost": {"input": 0, "output": 0},
                     "knowledge_cutoff": "2024-10", "clear": ["vision"]})
    assert event.facts.known() == {"context_window": 32_000, "tools": True, "cost": event.facts.cost,
                                   "knowledge_cutoff": "2024-10"}
    assert event.facts.cost is not None and event.facts.cost.free
    assert event.clear == ["vision"]


def test_every_reason_is_named_at_once() -> None:
    refused = refusal({"alias": "m", "context_window": 0, "tools": "yes", "cost": {"input": -1, "output": 2},
                       "knowledge_cutoff": "last year", "clear": ["colour"], "speed": 3})
    text = "; ".join(refused.errors)
    for part in ('"context_window"', '"tools"', '"cost.input"', '"knowledge_cutoff"', '"clear"', "speed"):
        assert part in text
    assert refused.status == 400


def test_an_unknown_model_is_404_and_an_empty_change_400() -> None:
    assert refusal({"alias": "nobody", "tools": True}).status == 404
    assert "nothing to set" in refusal({"alias": "m"}).errors[0]
    assert "set or clear, not both" in refusal({"alias": "m", "tools": True, "clear": ["tools"]}).errors[0]


def test_the_view_lists_every_fact_unknown_as_null() -> None:
    view = facts_view("m", config(endpoint(), model("m", tools=True)))
    lines = {line["fact"]: line for line in view["facts"]}
    assert lines["tools"] == {"fact": "tools", "value": True, "source": "registration"}
    assert lines["vision"] == {"fact": "vision", "value": None, "source": None}


def test_the_change_log_names_each_fact_set_or_cleared_with_its_old_value() -> None:
    log = ChangeLog()
    for event in (endpoint(), model("m")):
        log.apply(event, 0)
    log.apply(written({"alias": "m", "tools": True, "cost": {"input": 1, "output": 2}}), 3)
    log.apply(set_facts({"alias": "m", "clear": ["tools"]})(log.state, "cfg:y"), 4)
    rows = [(c["field"], c["old"], c["new"]) for c in reversed(log.newest(10)) if c["kind"] == "model facts"]
    price = {"input": 1.0, "output": 2.0}
    assert rows == [("tools", None, True), ("cost", None, price), ("tools", True, None)]
