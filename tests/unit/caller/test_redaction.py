"""Nothing secret or image-shaped leaves the caller in an error text."""

from __future__ import annotations

from services.caller.redaction import has_images, without_images, without_key
from shared.commands import Msg


def test_key_is_redacted_wherever_echoed() -> None:
    text = 'Error: Error code: 401 - {"message": "Incorrect API key provided: Bearer sk-abc123. sk-abc123"}'
    redacted = without_key(text, "sk-abc123")
    assert "sk-abc123" not in redacted and redacted.count("[redacted]") == 2


def test_no_key_leaves_text_alone() -> None:
    assert without_key("plain", None) == "plain"
    assert without_key("plain", "") == "plain"


def test_images_in_error_texts() -> None:
    data = "A" * 4000
    text = (
        f"bad image data:image/png;base64,{data} and https://user:pw@img.example.com/a/b.png?sig=xyz "
        f"and raw {'Q' * 200}"
    )
    out = without_images(text)
    assert "[image: data URL, 3 KB]" in out
    assert "https://img.example.com/a/b.png" in out and "sig=" not in out and "pw@" not in out
    assert "[base64, 1 KB]" in out and "Q" * 100 not in out


def test_has_images() -> None:
    plain = [Msg(role="user", content="hi")]
    with_image = [
        Msg(
            role="user",
            content=[
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
            ],
        )
    ]
    assert not has_images(plain) and has_images(with_image)
