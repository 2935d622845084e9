"""The model string → collection and reply mode (P-1, A-5, A-24) and the panel's agent guard (X-1, A-20)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from services.gateway.ask import Ask, ReplyMode, make_ask
from services.gateway.panel.resolve import refuse_agentic, resolve, split_model
from shared.events import CollectionSaved
from shared.refusal import Refusal
from tests.unit.factories import collection

COLLECTIONS = {
    "zeta": collection("zeta", ["a"], description="last one", tags=["code", "fast"]),
    "core": collection("core", ["a", "b"], description="everyday questions"),
    "agents": collection("agents", ["a"], description="for tools", reply="route"),
}


def ask(model: str, reply: ReplyMode | None = None, agentic: str = "") -> Ask:
    return make_ask("openai_chat", model, [{"role": "user", "content": "hi"}], reply=reply, agentic=agentic)


def refusal_of(model: str, collections: Mapping[str, CollectionSaved] = COLLECTIONS) -> Refusal:
    with pytest.raises(Refusal) as caught:
        resolve(ask(model), collections)
    return caught.value


@pytest.mark.parametrize(
    ("model", "name", "suffix"),
    [
        ("bench/core", "core", None),
        ("core", "core", None),
        ("bench/core:merged", "core", "merged"),
        ("bench/core:route", "core", "route"),
        ("core:all", "core", "all"),
        ("bench/core:both", "core:both", None),
        ("bench/core:latest", "core:latest", None),
        ("", "", None),
        ("bench/", "", None),
    ],
)
def test_split_model(model: str, name: str, suffix: str | None) -> None:
    assert split_model(model) == (name, suffix)


@pytest.mark.parametrize(
    ("model", "status"), [("", 400), ("bench/", 400), ("bench/nope", 404), ("bench/core:both", 404)]
)
def test_no_model_or_unknown_lists_every_collection_sorted(model: str, status: int) -> None:
    refusal = refusal_of(model)
    assert refusal.status == status
    lines = [line for line in refusal.message.splitlines() if line.startswith("- ")]
    assert lines == [
        "- bench/agents: for tools",
        "- bench/core: everyday questions",
        "- bench/zeta: last one [code, fast]",
    ]


def test_no_collection_at_all_gives_a_hint() -> None:
    refusal = refusal_of("bench/core", {})
    assert refusal.status == 404
    assert "bench collection save" in refusal.message


@pytest.mark.parametrize(
    ("model", "body_reply", "mode"),
    [
        ("bench/core", None, "all"),  # the collection's own (default) mode
        ("bench/agents", None, "route"),  # the collection's mode
        ("bench/agents:merged", None, "merged"),  # the suffix beats the collection
        ("bench/core:merged", "route", "route"),  # the body beats the suffix
        ("bench/agents", "all", "all"),  # the body beats the collection
    ],
)
def test_reply_mode_precedence(model: str, body_reply: ReplyMode | None, mode: str) -> None:
    resolved = resolve(ask(model, reply=body_reply), COLLECTIONS)
    assert resolved.mode == mode
    assert resolved.canonical == f"bench/{resolved.name}"


def test_a_panel_refuses_an_agents_turn_naming_route_mode() -> None:
    resolved = resolve(ask("bench/core", agentic="tools"), COLLECTIONS)
    with pytest.raises(Refusal) as caught:
        refuse_agentic(ask("bench/core", agentic="tools"), resolved)
    assert caught.value.status == 400
    assert "bench/core:route" in caught.value.message
    assert '"reply": "route"' in caught.value.message


def test_route_mode_and_plain_asks_pass_the_agent_guard() -> None:
    routed = ask("bench/core:route", agentic="tools")
    refuse_agentic(routed, resolve(routed, COLLECTIONS))
    plain = ask("bench/core")
    refuse_agentic(plain, resolve(plain, COLLECTIONS))
