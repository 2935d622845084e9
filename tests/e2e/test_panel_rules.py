"""What a panel decides before and after its seats, against a whole stack: the size check (P-5, A-13, A-14,
A-29), images and who can see them (P-6, A-15..A-18), retired members (A-19), merged replies in every
format (P-15, S-4, A-21..A-24). Models made here are ad hoc, so none explores on another module's panel."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anthropic
import openai
import pytest

from cli.stack import Stack
from tests.e2e.clients import Clients, check_all_text, clients, gemini_text, ndjson, sse_frames
from tests.e2e.conftest import Admin, logs_on_failure, wait_until
from tests.fakes.provider import FakeProvider

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(200))
DATA_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()
HTTPS_IMAGE = "https://images.example.com/cat.png"
MERGED = "The merged view, with every dissent kept."
VISION_SPECIALIST = "a vision specialist: sits only when the request carries images"


@dataclass
class Env:
    stack: Stack
    provider: FakeProvider
    admin: Admin
    sdk: Clients


@pytest.fixture(scope="module")
def env(stack: Stack, provider: FakeProvider) -> Iterator[Env]:
    provider.set_model("mrg-boss", answer=MERGED)
    provider.set_model("mrg-fail", behaviour="error_in_200")
    with logs_on_failure(stack.home):
        admin = Admin(stack.url)
        models: dict[str, dict[str, Any]] = {
            "win-small": {"context_window": 50},
            "win-mid": {"context_window": 200},
            "win-big": {"context_window": 1_000_000},
            "win-none": {},
            "see-a": {"vision": True},
            "see-b": {"vision": True},
            "blind-a": {"vision": False},
            "blind-b": {"vision": False},
            "blind-c": {"vision": False},
            "unsure-a": {},
            "unsure-b": {},
            "spec-eye": {"role": "vision", "vision": True},
            "ret-1": {},
            "ret-2": {},
            "ret-3": {},
            "mrg-a": {},
            "mrg-b": {},
            "mrg-boss": {},
            "mrg-fail": {},
            "mrg-tiny": {"context_window": 100},
        }
        for served, facts in models.items():
            admin.model(served, ad_hoc=True, **facts)
        admin.collection("size", ["win-small", "win-mid", "win-big", "win-none"])
        admin.collection("size-unknown", ["win-none", "win-big"])
        admin.collection("sight", ["see-a", "blind-a", "unsure-a"])
        admin.collection("dark", ["blind-a", "blind-b", "blind-c", "unsure-a", "unsure-b"])
        admin.collection("spec", ["see-b", "spec-eye"])
        admin.collection("ret", ["ret-1", "ret-2", "ret-3"])
        admin.collection("merge", ["mrg-a", "mrg-b"], merger="mrg-boss")
        admin.collection("merge-fail", ["mrg-a", "mrg-b"], merger="mrg-fail")
        admin.collection("merge-tiny", ["mrg-a", "mrg-b"], merger="mrg-tiny")
        admin.collection("merge-own", ["mrg-a", "mrg-b"], reply="merged", merger="mrg-boss")
        admin.collection("merge-free", ["mrg-b", "mrg-a"])  # no merger set: chosen from the members
        yield Env(stack, provider, admin, clients(stack.url))


def chat(env: Env, model: str, content: Any, **extra: Any) -> Any:
    return env.sdk.openai.chat.completions.create(
        model=model, messages=[{"role": "user", "content": content}], **extra
    )


def bench_of(completion: Any) -> dict[str, Any]:
    bench: dict[str, Any] = completion.model_extra["bench"]
    return bench


def calls_to(provider: FakeProvider, served: set[str], marker: str) -> list[dict[str, Any]]:
    """The provider calls made to these models whose messages carry `marker`."""
    return [r for r in provider.requests() if r["body"].get("model") in served and marker in str(r["body"])]


def marker() -> str:
    return f"marker-{uuid.uuid4().hex[:8]}"


# ---------------------------------------------------------------- P-5: the size check


def test_a13_too_large_for_a_member_is_413_naming_it_and_no_seat_is_called(env: Env) -> None:
    mark = marker()
    prompt = f"{mark} " + "x" * 1000  # 279 tokens (P-5): over 50 and 200, under 1,000,000
    with pytest.raises(openai.APIStatusError) as caught:
        chat(env, "bench/size", prompt)
    assert caught.value.status_code == 413
    message = caught.value.body["message"]  # type: ignore[index]
    assert message.startswith(
        "the request is about 279 tokens, more than the context window of "
        "win-small (50 tokens), win-mid (200 tokens). Trim it under 50 tokens"
    )
    assert "together.context_window" in message and "GET /v1/models" in message
    assert "win-big" not in message and "win-none" not in message
    assert calls_to(env.provider, {"win-small", "win-mid", "win-big", "win-none"}, mark) == []


def test_a14_a_member_whose_window_nobody_knows_never_refuses(env: Env) -> None:
    bench = bench_of(chat(env, "bench/size-unknown", "y" * 4000))
    assert [s["status"] for s in bench["seats"][:2]] == ["ok", "ok"]


def test_a29_a_streamed_request_too_large_keeps_its_413_in_every_format(env: Env) -> None:
    prompt = "z" * 1000
    with pytest.raises(openai.APIStatusError) as chat_error:
        chat(env, "bench/size", prompt, stream=True)
    assert chat_error.value.status_code == 413
    with pytest.raises(anthropic.APIStatusError) as messages_error:
        with env.sdk.anthropic.messages.stream(
            model="bench/size", max_tokens=10, messages=[{"role": "user", "content": prompt}]
        ) as stream:
            stream.until_done()
    assert messages_error.value.status_code == 413
    assert messages_error.value.body["error"]["type"] == "request_too_large"  # type: ignore[index]
    http = env.sdk.http
    for path, body in [
        ("/v1/completions", {"model": "bench/size", "prompt": prompt, "stream": True}),
        ("/v1/responses", {"model": "bench/size", "input": prompt, "stream": True}),
        ("/api/chat", {"model": "bench/size", "messages": [{"role": "user", "content": prompt}]}),
        ("/api/generate", {"model": "bench/size", "prompt": prompt}),
        (
            "/v1beta/models/bench/size:streamGenerateContent?alt=sse",
            {"contents": [{"parts": [{"text": prompt}]}]},
        ),
    ]:
        reply = http.post(path, json=body)
        assert reply.status_code == 413, (path, reply.text)
        assert reply.headers["content-type"].startswith("application/json")


# ---------------------------------------------------------------- P-6, C-7: images and roles


def image_content(mark: str) -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": f"{mark} what is in these?"},
        {"type": "image_url", "image_url": {"url": DATA_URL}},
        {"type": "image_url", "image_url": {"url": HTTPS_IMAGE, "detail": "low"}},
    ]


def test_a15_a17_members_that_cannot_see_are_skipped_and_seeing_ones_get_the_messages_as_sent(
    env: Env,
) -> None:
    mark = marker()
    content = image_content(mark)
    bench = bench_of(chat(env, "bench/sight", content))
    assert (bench["shape"], bench["shape_by"]) == ("vision", "the request carries images")
    skipped = {s["alias"]: s for s in bench["skipped"]}
    blind = "does not take images (says registration)"
    assert skipped["blind-a"] == {"seat": "member", "alias": "blind-a", "why": blind}
    assert skipped["unsure-a"]["seat"] == "member" and "Vision / OCR" in skipped["unsure-a"]["why"]
    assert [s["alias"] for s in bench["seats"] if s["seat"] == "member"] == ["see-a"]
    (sent,) = calls_to(env.provider, {"see-a"}, mark)
    assert sent["body"]["messages"] == [{"role": "user", "content": content}]
    assert calls_to(env.provider, {"blind-a", "unsure-a"}, mark) == []


def test_a16_no_seat_that_can_see_or_a_url_that_is_no_image_is_400(env: Env) -> None:
    with pytest.raises(openai.BadRequestError) as dark:
        chat(env, "bench/dark", image_content(marker()))
    message = str(dark.value)
    assert "blind-a (does not take images (says registration))" in message
    assert "unsure-b (not known to read images" in message
    assert "`together.capabilities` lists `vision`" in message
    secret = "file:///home/someone/secret-plans.png"
    for url, kind in [
        (secret, "a file: URL"),
        ("data:text/plain;base64,c2VjcmV0", 'a data URL of type "text/plain"'),
    ]:
        with pytest.raises(openai.BadRequestError) as bad:
            chat(
                env,
                "bench/sight",
                [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": url}}],
            )
        assert kind in str(bad.value) and "secret" not in str(bad.value)


def test_a18_a_vision_specialist_sits_only_on_an_image_request(env: Env) -> None:
    text = bench_of(chat(env, "bench/spec", "no pictures here"))
    assert text["skipped"] == [{"seat": "member", "alias": "spec-eye", "why": VISION_SPECIALIST}]
    assert [s["alias"] for s in text["seats"] if s["seat"] == "member"] == ["see-b"]
    image = bench_of(chat(env, "bench/spec", image_content(marker())))
    assert "skipped" not in image
    assert [s["alias"] for s in image["seats"] if s["seat"] == "member"] == ["see-b", "spec-eye"]


def test_a19_a_retired_member_is_skipped_and_the_others_sit(env: Env) -> None:
    env.admin.post("/api/remove", {"alias": "ret-2", "reason": "gone quiet"})
    bench = bench_of(chat(env, "bench/ret", "who is still here?"))
    (skip,) = bench["skipped"]
    assert (skip["seat"], skip["alias"]) == ("member", "ret-2") and "retired from the bench" in skip["why"]
    assert [s["alias"] for s in bench["seats"] if s["seat"] == "member"] == ["ret-1", "ret-3"]


# ---------------------------------------------------------------- P-15: merged replies


def test_a21_a_merged_reply_starts_with_the_mergers_answer(env: Env) -> None:
    mark = marker()
    done = chat(env, "bench/merge:merged", f"{mark} Is light a wave?")
    content = done.choices[0].message.content
    bench = bench_of(done)
    assert content.startswith(MERGED + "\n\n---\nMerged by mrg-boss (`")
    assert done.model == "bench/merge"
    assert bench["reply"] == "merged" and "note" not in bench
    assert bench["merger"]["call"] == f"{bench['panel']}.merger"
    assert (bench["merger"]["seat"], bench["merger"]["alias"], bench["merger"]["status"]) == (
        "merger",
        "mrg-boss",
        "ok",
    )
    assert [s["alias"] for s in bench["seats"][:2]] == ["mrg-a", "mrg-b"]
    assert all(s["call"] != bench["merger"]["call"] for s in bench["seats"])
    (merger_call,) = calls_to(env.provider, {"mrg-boss"}, mark)
    system, user = merger_call["body"]["messages"]
    assert system["role"] == "system" and "naming each model" in system["content"]
    assert user["content"].startswith(
        f"THE REQUEST\n\n{mark} Is light a wave?\n\nTHE ANSWERS\n\n## member — mrg-a"
    )


def test_without_a_merger_set_a_member_merges(env: Env) -> None:
    bench = bench_of(chat(env, "bench/merge-free:merged", "pick one"))
    assert bench["reply"] == "merged" and bench["merger"]["alias"] in ("mrg-b", "mrg-a")


def test_a_useful_verdict_makes_its_model_the_merger_on_its_panels_shape(env: Env) -> None:
    """The verdict carries its panel's shape from the ledger to the seater, which ranks mergers by it."""
    first = bench_of(chat(env, "bench/merge-free:merged", "which of the two is right?"))
    assert first["merger"]["alias"] == "mrg-b"  # nobody has a verdict: the members in order
    seat = next(s for s in first["seats"] if s["alias"] == "mrg-a")
    answer = env.sdk.http.post("/bench/verdict", json={"call": seat["call"], "useful": True})
    assert answer.status_code == 200, answer.text

    def merged_by_a() -> bool:
        again = bench_of(chat(env, "bench/merge-free:merged", "which of the two is right?"))
        assert again["shape"] == first["shape"]
        return bool(again["merger"]["alias"] == "mrg-a")

    wait_until(merged_by_a, what="the verdict to reach the seater's tally for its shape")


def test_a22_a_failing_merger_leaves_every_answer_and_a_note(env: Env) -> None:
    done = chat(env, "bench/merge-fail:merged", "Is light a particle?")
    content = done.choices[0].message.content
    bench = bench_of(done)
    assert bench["reply"] == "all" and bench["note"].startswith("the merger mrg-fail came back error")
    assert bench["merger"]["alias"] == "mrg-fail" and bench["merger"]["status"] == "error"
    assert content.startswith(f"_Merged reply unavailable: {bench['note']}. Every answer follows._\n\nBench ")
    for seat in bench["seats"]:
        assert f"`{seat['call']}`" in content


def test_a23_a_merger_too_small_is_never_called(env: Env) -> None:
    mark = marker()
    bench = bench_of(chat(env, "bench/merge-tiny:merged", f"{mark} " + "w" * 400))
    assert bench["reply"] == "all" and "merger" not in bench
    assert bench["note"].startswith("no merger has the context window for the merge (about ")
    assert calls_to(env.provider, {"mrg-tiny"}, mark) == []


def test_a24_body_beats_suffix_beats_collection(env: Env) -> None:
    assert bench_of(chat(env, "bench/merge-own", "own mode"))["reply"] == "merged"
    assert "reply" not in bench_of(chat(env, "bench/merge-own:all", "suffix wins"))
    body_all = chat(env, "bench/merge:merged", "body wins", extra_body={"bench": {"reply": "all"}})
    assert "reply" not in bench_of(body_all)
    body_merged = chat(env, "bench/merge:all", "body wins", extra_body={"bench": {"reply": "merged"}})
    assert bench_of(body_merged)["reply"] == "merged"
    with pytest.raises(openai.NotFoundError):
        chat(env, "bench/merge:both", "no such mode")
    with pytest.raises(openai.BadRequestError) as both:
        chat(env, "bench/merge", "no such mode", extra_body={"bench": {"reply": "both"}})
    assert "bench.reply" in str(both.value)


def test_merged_in_every_format_plain(env: Env) -> None:
    sdk = env.sdk
    completion = sdk.openai.completions.create(model="bench/merge:merged", prompt="q")
    assert completion.choices[0].text.startswith(MERGED)
    assert (completion.model_extra or {})["bench"]["reply"] == "merged"
    assert sdk.openai.responses.create(model="bench/merge:merged", input="q").output_text.startswith(MERGED)
    message = sdk.anthropic.messages.create(
        model="bench/merge:merged", max_tokens=10, messages=[{"role": "user", "content": "q"}]
    )
    assert message.content[0].type == "text" and message.content[0].text.startswith(MERGED)
    ollama_reply = sdk.ollama.chat(
        model="bench/merge:merged", messages=[{"role": "user", "content": "q"}], stream=False
    )
    assert (ollama_reply.message.content or "").startswith(MERGED)
    assert (
        sdk.ollama.generate(model="bench/merge:merged", prompt="q", stream=False).response or ""
    ).startswith(MERGED)
    gemini = sdk.gemini.models.generate_content(model="bench/merge:merged", contents="q")
    assert (gemini.text or "").startswith(MERGED)
    assert gemini.sdk_http_response and gemini.sdk_http_response.headers
    assert '"seat": "merger"' in gemini.sdk_http_response.headers["x-bench-seats"]


def pieces_of(path: str, raw: str) -> tuple[list[str], dict[str, Any] | None]:
    """The non-empty text pieces of a streamed reply, and its `bench` (None for Gemini, which has none)."""
    if path == "/v1/chat/completions":
        data = [d for n, d in sse_frames(raw) if n is None and isinstance(d, dict)]
        return [d["choices"][0]["delta"].get("content") or "" for d in data], data[-1]["bench"]
    if path == "/v1/completions":
        data = [d for n, d in sse_frames(raw) if n is None and isinstance(d, dict)]
        return [d["choices"][0]["text"] for d in data], data[-1]["bench"]
    if path == "/v1/responses":
        events = [d for n, d in sse_frames(raw) if n and n != ":"]
        return [e["delta"] for e in events if e["type"] == "response.output_text.delta"], events[-1][
            "response"
        ]["bench"]
    if path == "/v1/messages":
        named = [(n, d) for n, d in sse_frames(raw) if n and n != ":"]
        deltas = [d["delta"]["text"] for n, d in named if n == "content_block_delta"]
        return deltas, next(d for n, d in named if n == "message_delta")["bench"]
    if path == "/api/chat":
        lines = ndjson(raw)
        return [line["message"]["content"] for line in lines], lines[-1]["bench"]
    return [gemini_text(d) for _, d in sse_frames(raw)], None


def test_merged_streams_one_piece_in_every_format(env: Env) -> None:
    """S-4: no per-seat pieces; the whole merged content in one piece when done."""
    messages = [{"role": "user", "content": "q"}]
    requests: list[tuple[str, dict[str, Any]]] = [
        ("/v1/chat/completions", {"model": "bench/merge:merged", "stream": True, "messages": messages}),
        ("/v1/completions", {"model": "bench/merge:merged", "stream": True, "prompt": "q"}),
        ("/v1/responses", {"model": "bench/merge:merged", "stream": True, "input": "q"}),
        (
            "/v1/messages",
            {"model": "bench/merge:merged", "stream": True, "max_tokens": 5, "messages": messages},
        ),
        ("/api/chat", {"model": "bench/merge:merged", "messages": messages}),
        (
            "/v1beta/models/bench/merge:merged:streamGenerateContent",
            {"contents": [{"parts": [{"text": "q"}]}]},
        ),
    ]
    for path, body in requests:
        reply = env.sdk.http.post(path, json=body, params={"alt": "sse"} if "v1beta" in path else None)
        assert reply.status_code == 200, (path, reply.text)
        pieces, bench = pieces_of(path, reply.text)
        texts = [p for p in pieces if p]
        assert len(texts) == 1 and texts[0].startswith(MERGED), (path, pieces)
        if bench is not None:
            assert bench["reply"] == "merged" and bench["merger"]["alias"] == "mrg-boss"


def test_a_merged_fallback_streams_the_whole_text_in_one_piece(env: Env) -> None:
    body = {
        "model": "bench/merge-fail:merged",
        "stream": True,
        "messages": [{"role": "user", "content": "q"}],
    }
    pieces, bench = pieces_of(
        "/v1/chat/completions", env.sdk.http.post("/v1/chat/completions", json=body).text
    )
    texts = [p for p in pieces if p]
    assert len(texts) == 1 and bench is not None
    assert texts[0].startswith("_Merged reply unavailable: the merger mrg-fail came back error")
    check_all_text(texts[0].split("Every answer follows._\n\n", 1)[1], bench, "bench/merge-fail")
