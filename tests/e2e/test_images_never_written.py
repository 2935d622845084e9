"""Images through every format that carries them, against a whole stack (X-5, P-6, SEC-7, A-42, A-72).

A recognisable image is planted, as inline bytes and as an https URL with a password and a secret query,
through each format's official SDK, on a merged panel with a seat that fails. The seats that can see get it
as OpenAI `image_url` parts; the merger gets placeholders. Then every event in the stream, every row of
every DuckDB table (read from the ledger's file with the ledger stopped) and every service log is searched:
none holds a byte of the image or a secret of the URL, and the placeholders are there instead."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from google.genai import types as genai_types

from cli.stack import Stack
from shared import subjects
from tests.e2e.clients import Clients, clients
from tests.e2e.conftest import Admin, admin_bus, events_on, ledger_dump, logs_on_failure, wait_until
from tests.fakes.provider import FakeProvider

PIXELS = b"\x89PNG\r\n\x1a\n" + b"PLANTED-PIXELS-" * 40
B64 = base64.b64encode(PIXELS).decode()
DATA_URL = "data:image/png;base64," + B64
URL = "https://pixuser:pixpass-7Q2@img.example.com/cat.png?sig=QSECRET93"
# What must never be written down: a run of the image's base64, its raw bytes, the URL's secrets.
NEEDLES = ("UExBTlRFRC1QSVhFTFMt", "PLANTED-PIXELS", "pixpass-7Q2", "QSECRET93", "pixuser")
DATA_PLACEHOLDER = "[image: data URL, 1 KB]"
URL_PLACEHOLDER = "[image: https://img.example.com/cat.png?...]"
MERGED = "merged without looking at any picture"


@dataclass
class Env:
    stack: Stack
    provider: FakeProvider
    sdk: Clients


@pytest.fixture(scope="module")
def env(stack: Stack, provider: FakeProvider) -> Iterator[Env]:
    provider.set_model("img-merger", answer=MERGED)
    provider.set_model("img-broken", behaviour="error_in_200")
    with logs_on_failure(stack.home):
        admin = Admin(stack.url)
        for served in ("img-eye", "img-broken"):
            admin.model(served, ad_hoc=True, vision=True)
        admin.model("img-merger", ad_hoc=True)
        admin.collection("plant", ["img-eye", "img-broken"], merger="img-merger")
        yield Env(stack, provider, clients(stack.url))


def ask_every_format(sdk: Clients) -> dict[str, tuple[str, bool]]:
    """One merged image panel per format; format → (its text marker, whether it sent the URL too)."""
    model = "bench/plant:merged"
    sdk.openai.chat.completions.create(
        model=model,
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "mark-chat: what is this?"},
                    {"type": "image_url", "image_url": {"url": DATA_URL}},
                    {"type": "image_url", "image_url": {"url": URL}},
                ],
            }
        ],
    )
    sdk.openai.responses.create(
        model=model,
        input=[
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "mark-responses: what is this?"},
                    {"type": "input_image", "image_url": DATA_URL, "detail": "auto"},
                    {"type": "input_image", "image_url": URL, "detail": "auto"},
                ],
            }
        ],
    )
    sdk.anthropic.messages.create(
        model=model,
        max_tokens=20,
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "mark-anthropic: what is this?"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}},
                    {"type": "image", "source": {"type": "url", "url": URL}},
                ],
            }
        ],
    )
    sdk.ollama.chat(
        model=model,
        stream=False,
        messages=[
            {"role": "user", "content": "mark-ollama-chat: what is this?", "images": [PIXELS]},
        ],
    )
    sdk.ollama.generate(
        model=model, stream=False, prompt="mark-ollama-generate: what is this?", images=[PIXELS]
    )
    sdk.gemini.models.generate_content(
        model=model,
        contents=[
            "mark-gemini: what is this?",
            genai_types.Part.from_bytes(data=PIXELS, mime_type="image/png"),
            genai_types.Part.from_uri(file_uri=URL, mime_type="image/png"),
        ],
    )
    return {
        "chat": ("mark-chat", True),
        "responses": ("mark-responses", True),
        "anthropic": ("mark-anthropic", True),
        "ollama chat": ("mark-ollama-chat", False),
        "ollama generate": ("mark-ollama-generate", False),
        "gemini": ("mark-gemini", True),
    }


@pytest.fixture(scope="module")
def planted(env: Env) -> dict[str, tuple[str, bool]]:
    asked = ask_every_format(env.sdk)
    panels = seat_panels(env)
    assert len(panels) == len(asked)
    for panel in panels:  # each panel's log line goes out after its reply
        subject = subjects.panel_subject(panel)
        wait_until(lambda: events_on(env.stack, subject)[0] == 2, what=f"{panel} logged")  # noqa: B023
    return asked


def seat_panels(env: Env) -> set[str]:
    """Every panel of the `plant` collection, read from the event stream."""
    return {
        e["panel"]
        for e in stream_events(env)
        if e.get("type") == "panel_seated" and e["collection"] == "plant"
    }


def stream_events(env: Env) -> list[dict[str, Any]]:
    """Every event in `BENCH_EVENTS`, as stored, in order."""

    async def read() -> list[dict[str, Any]]:
        nc = await admin_bus(env.stack)
        try:
            js = nc.jetstream()
            info = await js.stream_info(subjects.EVENTS_STREAM)
            out: list[dict[str, Any]] = []
            for seq in range(info.state.first_seq, info.state.last_seq + 1):
                raw = await js.get_msg(subjects.EVENTS_STREAM, seq)
                out.append(json.loads(raw.data or b"{}"))
            return out
        finally:
            await nc.close()

    return asyncio.run(read())


def test_a42_images_reach_the_seats_that_see_as_openai_image_url_parts(
    env: Env, planted: dict[str, tuple[str, bool]]
) -> None:
    calls = [r["body"] for r in env.provider.requests() if r["body"].get("model") == "img-eye"]
    for name, (mark, with_url) in planted.items():
        (body,) = [b for b in calls if mark in json.dumps(b)]
        parts = [
            p for m in body["messages"] for p in (m["content"] if isinstance(m["content"], list) else [])
        ]
        urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
        assert urls == ([DATA_URL, URL] if with_url else [DATA_URL]), name
        assert not [p for p in parts if p.get("type") not in ("text", "image_url")], name


def test_a72_the_merger_reads_placeholders_only(env: Env, planted: dict[str, tuple[str, bool]]) -> None:
    mergers = [r["body"] for r in env.provider.requests() if r["body"].get("model") == "img-merger"]
    for name, (mark, with_url) in planted.items():
        (body,) = [b for b in mergers if mark in json.dumps(b)]
        text = json.dumps(body)
        assert DATA_PLACEHOLDER in body["messages"][1]["content"], name
        assert (URL_PLACEHOLDER in body["messages"][1]["content"]) == with_url, name
        assert "image_url" not in text and not [n for n in NEEDLES if n in text], name


def test_a72_no_event_holds_an_image_or_a_url_secret(env: Env, planted: dict[str, tuple[str, bool]]) -> None:
    events = stream_events(env)
    dumped = json.dumps(events)
    assert not [n for n in NEEDLES if n in dumped]
    answered = [e for e in events if e.get("type") == "panel_answered" and e["collection"] == "plant"]
    assert len(answered) == len(planted)
    assert all(DATA_PLACEHOLDER in e["prompt"] for e in answered)
    assert sum(URL_PLACEHOLDER in e["prompt"] for e in answered) == sum(url for _, url in planted.values())
    assert all(e["reply"] == "merged" and e["calls"][-1].endswith(".merger") for e in answered)


def test_a72_no_log_line_holds_an_image_or_a_url_secret(
    env: Env, planted: dict[str, tuple[str, bool]]
) -> None:
    logs = sorted((env.stack.home / "logs").glob("*.log"))
    assert {log.name.split("-")[0] for log in logs} >= {"gateway", "seater", "caller", "ledger"}
    for log in logs:
        text = log.read_text(errors="replace")
        assert not [n for n in NEEDLES if n in text], log.name


def test_a72_no_ledger_row_holds_an_image_or_a_url_secret(
    env: Env, planted: dict[str, tuple[str, bool]]
) -> None:
    """Read from the ledger's own DuckDB file: the ledger is stopped (it holds the file's lock) once it has
    folded everything, then started again for the tests that follow."""
    tables, dumped = ledger_dump(env.stack)
    assert len(tables) >= 3 and "plant" in dumped and DATA_PLACEHOLDER in dumped
    assert not [n for n in NEEDLES if n in dumped]


def test_a72_the_work_queue_keeps_no_call(env: Env, planted: dict[str, tuple[str, bool]]) -> None:
    """The image rode on SeatCalls, which the callers consumed: the work queue holds none of them now."""

    async def waiting() -> int:
        nc = await admin_bus(env.stack)
        try:
            info = await nc.jetstream().stream_info(subjects.CALLS_STREAM)
            return int(info.state.messages)
        finally:
            await nc.close()

    wait_until(lambda: asyncio.run(waiting()) == 0, what="the work queue emptying")
