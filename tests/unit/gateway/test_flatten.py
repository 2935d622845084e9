"""Flattening (P-10), image placeholders (SEC-7) and the size estimate (P-5)."""

from __future__ import annotations

import pytest

from services.gateway.panel.flatten import (
    estimate_text,
    estimate_tokens,
    flatten,
    image_placeholder,
    without_images,
)


def test_one_turn_is_its_text() -> None:
    flat = flatten([{"role": "user", "content": "hello"}])
    assert (flat.system, flat.prompt, flat.images) == ("", "hello", 0)


def test_system_and_developer_join_with_a_blank_line() -> None:
    flat = flatten(
        [
            {"role": "system", "content": "A"},
            {"role": "user", "content": "q"},
            {"role": "developer", "content": "B"},
        ]
    )
    assert flat.system == "A\n\nB"
    assert flat.prompt == "q"


def test_several_turns_are_labelled_by_role() -> None:
    flat = flatten(
        [
            {"role": "user", "content": "one"},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "two"}, {"type": "text", "text": "three"}],
            },
            {"role": "user", "content": "four"},
        ]
    )
    assert flat.prompt == "user: one\n\nassistant: two\n\nthree\n\nuser: four"


def test_images_become_placeholders_and_are_counted() -> None:
    flat = flatten(
        [
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + "A" * 4000}},
                    {"type": "text", "text": "what?"},
                ],
            }
        ]
    )
    assert flat.images == 1
    assert flat.prompt == "[image: data URL, 3 KB]\n\nwhat?"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://u:p@example.com:8443/x/y.png?token=abc", "[image: https://example.com:8443/x/y.png?...]"),
        ("http://example.com/a.png", "[image: http://example.com/a.png]"),
        ("data:image/png;base64,AAAA", "[image: data URL, 1 KB]"),
    ],
)
def test_placeholders_never_carry_secrets(url: str, shown: str) -> None:
    assert image_placeholder(url) == shown


def test_long_urls_are_cut_to_200() -> None:
    shown = image_placeholder("https://example.com/" + "a" * 500)
    assert shown == "[image: " + ("https://example.com/" + "a" * 500)[:200] + "]"


def test_estimate_follows_p5() -> None:
    assert estimate_text("") == 0
    assert estimate_text("a") == 1
    assert estimate_text("x" * 400) == 110
    assert estimate_tokens("", "x" * 400) == 110
    assert estimate_tokens("s" * 198, "p" * 200) == estimate_text("s" * 198 + "\n\n" + "p" * 200)
    assert estimate_tokens("", "x" * 400, images=2) == 110 + 5_000


def test_free_text_loses_image_bytes_and_url_secrets() -> None:
    """SEC-7 for error texts: data URLs, URLs with a query or a password, long base64 runs."""
    data = "data:image/png;base64," + "iVBORw0KGgo" * 40
    text = (
        f"bad part {data} and https://me:hunter2@img.example.com/cat.png?sig=SECRET near "
        + "QUJD" * 40
    )
    clean = without_images(text)
    assert clean == (
        "bad part [image: data URL, 1 KB] and [image: https://img.example.com/cat.png?...] "
        "near [base64, 1 KB]"
    )
