"""The translation helpers every non-chat format shares (X-5 collapse and images, RM-5 call ids)."""

from __future__ import annotations

from typing import Any

import pytest

from services.gateway.ask import make_ask
from services.gateway.formats.canonical import (
    CallNumbers,
    add_tool_call,
    collapse,
    data_url,
    image_part,
    stream_flag,
    text_part,
    tool_call,
)
from shared.refusal import Refusal


def test_text_only_parts_collapse_to_one_string_joined_by_blank_lines() -> None:
    assert collapse([text_part("a"), text_part("b")]) == "a\n\nb"
    assert collapse([]) == ""


def test_parts_with_an_image_stay_parts() -> None:
    parts = [text_part("look"), image_part("https://example.com/cat.png")]
    assert collapse(parts) == parts
    assert parts[1] == {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}


def test_image_part_keeps_detail_and_refuses_what_is_not_an_image_url() -> None:
    assert image_part("https://x.io/a.png", "low")["image_url"] == {
        "url": "https://x.io/a.png",
        "detail": "low",
    }
    for bad in ("file:///etc/passwd", "data:text/plain;base64,aGk=", "ftp://x/y.png", 42):
        with pytest.raises(Refusal) as caught:
            image_part(bad)
        assert caught.value.status == 400


def test_data_url_only_for_images_and_in_the_standard_base64_alphabet() -> None:
    assert data_url("image/png", "ab-_cd==", "here") == "data:image/png;base64,ab+/cd=="
    with pytest.raises(Refusal) as caught:
        data_url("application/pdf", "JVBERi0=", "messages[0]")
    assert caught.value.status == 400
    assert "messages[0]" in caught.value.message and "application/pdf" in caught.value.message
    with pytest.raises(Refusal):
        data_url("image/png", "", "here")


def test_tool_call_encodes_object_arguments_and_keeps_strings() -> None:
    assert tool_call("c1", "f", {"a": 1})["function"] == {"name": "f", "arguments": '{"a": 1}'}
    assert tool_call("c1", "f", '{"a":1}')["function"]["arguments"] == '{"a":1}'
    assert tool_call("c1", "f", None)["function"]["arguments"] == "{}"


def test_calls_ride_on_the_trailing_assistant_message() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "on it"},
    ]
    add_tool_call(messages, tool_call("a", "f", {}))
    add_tool_call(messages, tool_call("b", "g", {}))
    assert len(messages) == 2
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["a", "b"]
    messages.append({"role": "tool", "tool_call_id": "a", "content": "x"})
    add_tool_call(messages, tool_call("c", "f", {}))
    assert messages[-1] == {"role": "assistant", "content": None, "tool_calls": [tool_call("c", "f", {})]}


def test_call_numbers_match_results_to_the_oldest_open_call_of_the_same_name() -> None:
    numbers = CallNumbers()
    assert [numbers.call("read"), numbers.call("write"), numbers.call("read")] == [
        "call_0",
        "call_1",
        "call_2",
    ]
    assert numbers.result("read") == "call_0"
    assert numbers.result("read") == "call_2"
    assert numbers.result(None) == "call_1"  # unnamed: the oldest open call of any name
    assert numbers.result("read") == "call_3"  # nothing open: a fresh number


def test_call_numbers_pass_given_ids_through() -> None:
    numbers = CallNumbers()
    assert numbers.call("f", "abc") == "abc"
    assert numbers.call("f") == "call_0"
    assert numbers.result("f", "abc") == "abc"
    assert numbers.result("f") == "call_0"


def test_an_ask_keeps_the_model_as_asked_and_the_route_fields() -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    plain = make_ask("x", "bench/core", messages, with_=["m1"], reply="merged", stream=True)
    assert (plain.system, plain.prompt, plain.images) == ("Be brief.", "Hi", 0)
    assert (plain.asked_model, plain.route_fields, plain.event_stream) == ("bench/core", {}, True)
    tuned = make_ask(
        "x", "bench/core", messages, asked_model="bench/core:latest", route_fields={"temperature": 0.2}
    )
    assert (tuned.model, tuned.asked_model) == ("bench/core", "bench/core:latest")
    assert tuned.route_fields == {"temperature": 0.2} and tuned.estimate == plain.estimate


def test_stream_flag() -> None:
    assert stream_flag({}) is False
    assert stream_flag({}, default=True) is True
    assert stream_flag({"stream": False}, default=True) is False
    with pytest.raises(Refusal) as caught:
        stream_flag({"stream": "yes"})
    assert caught.value.status == 400
