"""Responses tools as a member is offered them (RM-5, X-2): namespaces flattened, hosted tools left out and
named, and every tool list that would be broken refused with a 400 that says why."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.gateway.formats.responses_tools import NAME_LIMIT, flat_name, tool_choice, tool_offer
from shared.refusal import Refusal

SCHEMA = {"type": "object", "properties": {"target": {"type": "string"}}, "required": ["target"]}


def function(name: str, **rest: Any) -> dict[str, Any]:
    return {"type": "function", "name": name, "parameters": SCHEMA, **rest}


def namespace(name: str, *tools: dict[str, Any]) -> dict[str, Any]:
    return {"type": "namespace", "name": name, "description": "Tools for sub-agents.", "tools": list(tools)}


def refused(tools: Any) -> str:
    with pytest.raises(Refusal) as caught:
        tool_offer({"tools": tools})
    assert caught.value.status == 400
    return caught.value.message


def test_a_namespace_is_flattened_into_functions_named_after_it() -> None:
    offer = tool_offer({"tools": [
        function("exec_command"),
        namespace("multi_agent_v1", function("spawn_agent", description="Spawn one.", strict=False),
                  {"type": "custom", "name": "note", "description": "Free text."}),
    ]})
    assert [t["function"]["name"] for t in offer.tools] == [
        "exec_command", "multi_agent_v1__spawn_agent", "multi_agent_v1__note"]
    assert offer.tools[1]["function"] == {"name": "multi_agent_v1__spawn_agent", "description": "Spawn one.",
                                          "parameters": SCHEMA, "strict": False}
    assert offer.tools[2]["function"]["parameters"]["required"] == ["input"]  # a custom member stays custom
    assert offer.namespaced == {"multi_agent_v1__spawn_agent": ("multi_agent_v1", "spawn_agent"),
                                "multi_agent_v1__note": ("multi_agent_v1", "note")}
    assert offer.custom == frozenset({"multi_agent_v1__note"})
    assert offer.dropped == () and offer.declared


def test_flat_names_follow_one_rule_and_stay_within_openais_limit() -> None:
    assert flat_name("collaboration", "wait_agent") == "collaboration__wait_agent"
    assert flat_name("mcp__node_repl__", "js") == "mcp__node_repl__js"  # Codex's MCP namespaces end in __
    long_a, long_b = flat_name("mcp__" + "x" * 60, "tool_a"), flat_name("mcp__" + "x" * 60, "tool_b")
    assert len(long_a) == len(long_b) == NAME_LIMIT and long_a != long_b
    assert long_a == flat_name("mcp__" + "x" * 60, "tool_a")  # the same call, the same name, every turn


def test_hosted_tools_are_left_out_and_named_once_each() -> None:
    offer = tool_offer({"tools": [{"type": "web_search", "external_web_access": False}, function("ls"),
                                  {"type": "image_generation"}, {"type": "web_search"}]})
    assert [t["function"]["name"] for t in offer.tools] == ["ls"]
    assert offer.dropped == ("web_search", "image_generation")


def test_hosted_tools_alone_offer_nothing_but_are_still_declared_tools() -> None:
    offer = tool_offer({"tools": [{"type": "file_search", "vector_store_ids": []}]})
    assert (offer.tools, offer.dropped, offer.declared) == ([], ("file_search",), True)
    assert not tool_offer({"tools": []}).declared and not tool_offer({}).declared


def test_a_named_tool_choice_in_a_namespace_takes_the_flattened_name() -> None:
    choice = {"type": "function", "name": "spawn_agent", "namespace": "multi_agent_v1"}
    assert tool_choice(choice) == {"type": "function", "function": {"name": "multi_agent_v1__spawn_agent"}}
    assert tool_choice({"type": "custom", "name": "apply_patch"}) == {
        "type": "function", "function": {"name": "apply_patch"}}
    assert tool_choice("required") == "required"
    assert tool_choice({"type": "web_search"}) is None


@pytest.mark.parametrize(("tools", "words"), [
    ([namespace("multi_agent_v1")], 'the namespace "multi_agent_v1" has no tools'),
    ([{"type": "namespace", "name": "ns"}], 'the namespace "ns" has no tools'),
    ([{"type": "namespace", "name": "ns", "tools": {"a": 1}}], 'the namespace "ns" has no tools'),
    ([{"type": "namespace", "tools": [function("a")]}], 'tools[0]: a namespace tool needs a "name"'),
    ([namespace("ns", {"type": "web_search"})], 'tools[0].tools[0]: a namespace can hold only'),
    ([namespace("ns", namespace("inner", function("a")))], '(got "namespace")'),
    ([namespace("ns", {"type": "function"})], 'tools[0].tools[0]: a function tool needs'),
    ([{"type": "custom", "name": ""}], 'tools[0]: a custom tool needs a "name"'),
    (["ls"], 'tools[0] must be a tool object with a "type"'),
    ("ls", '"tools" must be a list'),
])
def test_a_broken_tool_list_is_refused_with_why(tools: Any, words: str) -> None:
    assert words in refused(tools)


@pytest.mark.parametrize(("tools", "where"), [
    ([function("ns__a"), namespace("ns", function("a"))], 'tools[0] ("ns__a") and tools[1].tools[0] (ns.a)'),
    ([namespace("ns", function("a"), function("a"))], "tools[0].tools[0] (ns.a) and tools[0].tools[1]"),
    ([function("ls"), {"type": "custom", "name": "ls"}], 'tools[0] ("ls") and tools[1] ("ls")'),
])
def test_two_tools_with_one_name_after_flattening_are_refused(tools: list[Any], where: str) -> None:
    message = refused(tools)
    assert "two tools are both called" in message and where in message


NAMES = st.sampled_from(["a", "b", "ns__a", "ns", "mcp__x__", "", None, 3]) | st.text(max_size=70)
KINDS = st.sampled_from(["function", "custom", "namespace", "web_search", "image_generation", None, 1])
LEAF_TOOLS = st.fixed_dictionaries({"type": KINDS, "name": NAMES}, optional={"parameters": st.just(SCHEMA)})
TOOLS = st.recursive(
    LEAF_TOOLS | st.none() | st.text(max_size=3),
    lambda inner: st.fixed_dictionaries({"type": KINDS, "name": NAMES},
                                        optional={"tools": st.lists(inner, max_size=4) | st.none()}),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(TOOLS, max_size=6))
def test_any_tool_list_is_refused_with_a_400_or_offered_whole_with_unique_names(tools: list[Any]) -> None:
    try:
        offer = tool_offer({"tools": tools})
    except Refusal as refusal:
        assert refusal.status == 400 and refusal.message
        return
    names = [t["function"]["name"] for t in offer.tools]
    assert all(isinstance(n, str) and n for n in names) and len(names) == len(set(names))
    assert all(len(n) <= NAME_LIMIT for n in offer.namespaced)
    assert set(offer.namespaced) | offer.custom <= set(names)
