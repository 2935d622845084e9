"""OpenAI legacy completions: request → Ask (H-G3, X-3, X-4), the reply (H-G3), the chunks (S-5), H-1."""

from __future__ import annotations

from typing import Any

import pytest

from services.gateway.formats.completions import Completions
from services.gateway.panel.flatten import estimate_text
from shared.refusal import Refusal
from tests.unit.gateway.formats.streams import BENCH, PIECES, answer, comments, sse_events, whole_stream

FMT = Completions()


def refused(body: dict[str, Any]) -> Refusal:
    with pytest.raises(Refusal) as caught:
        FMT.parse(body, {})
    return caught.value


def test_prompt_becomes_one_user_message() -> None:
    ask = FMT.parse({"model": "bench/core", "prompt": "Why is the sky blue?"}, {})
    assert ask.messages == [{"role": "user", "content": "Why is the sky blue?"}]
    assert (ask.prompt, ask.system, ask.stream, ask.agentic) == ("Why is the sky blue?", "", False, "")


def test_a_one_element_list_is_one_prompt() -> None:
    assert FMT.parse({"model": "m", "prompt": ["Hi"]}, {}).prompt == "Hi"


@pytest.mark.parametrize("prompt", [["a", "b"], [1, 2, 3], [[1, 2]], None, 7, []])
def test_several_prompts_or_token_ids_are_refused(prompt: Any) -> None:
    refusal = refused({"model": "m", "prompt": prompt})
    assert refusal.status == 400
    assert "one string" in refusal.message


def test_sampling_is_read_past_and_kept_for_route_mode() -> None:
    plain = FMT.parse({"model": "m", "prompt": "Hi"}, {})
    tuned = FMT.parse(
        {
            "model": "m",
            "prompt": "Hi",
            "max_tokens": 5,
            "temperature": 0.3,
            "top_p": 0.9,
            "stop": ["\n"],
            "n": 1,
            "logprobs": None,
        },
        {},
    )
    assert tuned.messages == plain.messages and tuned.estimate == plain.estimate
    assert tuned.route_fields == {"max_tokens": 5, "temperature": 0.3, "top_p": 0.9, "stop": ["\n"]}


def test_common_fields_with_bench_and_stream() -> None:
    ask = FMT.parse(
        {"model": "m", "prompt": "Hi", "with": ["a"], "bench": {"reply": "merged"}, "stream": True}, {}
    )
    assert (ask.with_, ask.reply, ask.stream) == (["a"], "merged", True)
    assert refused({"model": "m", "prompt": "Hi", "with": "a"}).status == 400
    assert refused({"model": "m", "prompt": "Hi", "bench": {"reply": "both"}}).status == 400
    assert refused({"model": 3, "prompt": "Hi"}).status == 400
    assert refused({"model": "m", "prompt": "Hi", "stream": 1}).status == 400


def test_reply_is_a_text_completion_with_estimated_usage() -> None:
    ask = FMT.parse({"model": "bench/core:merged", "prompt": "Why is the sky blue?"}, {})
    body = FMT.reply(ask, answer("Because.")).body
    assert body["id"].startswith("cmpl-") and len(body["id"]) == len("cmpl-") + 24
    assert body["object"] == "text_completion"
    assert body["model"] == "bench/core:merged"  # as asked
    assert isinstance(body["created"], int)
    assert body["choices"] == [{"text": "Because.", "index": 0, "logprobs": None, "finish_reason": "stop"}]
    assert body["usage"] == {
        "prompt_tokens": ask.estimate,
        "completion_tokens": estimate_text("Because."),
        "total_tokens": ask.estimate + estimate_text("Because."),
    }
    assert body["bench"] == BENCH


def test_stream_is_text_chunks_then_a_final_chunk_with_bench_then_done() -> None:
    ask = FMT.parse({"model": "bench/core", "prompt": "Hi", "stream": True}, {})
    raw = whole_stream(FMT, ask, keepalive=True)
    events = sse_events(raw)
    assert events[-1] == (None, "[DONE]")
    chunks = [data for _, data in events[:-1]]
    assert {c["id"] for c in chunks} == {chunks[0]["id"]}
    assert all(c["object"] == "text_completion" and c["model"] == "bench/core" for c in chunks)
    assert "".join(c["choices"][0]["text"] for c in chunks) == "".join(PIECES)
    assert all(c["choices"][0]["finish_reason"] is None and "bench" not in c for c in chunks[:-1])
    assert chunks[-1]["choices"][0] == {"text": "", "index": 0, "logprobs": None, "finish_reason": "stop"}
    assert chunks[-1]["bench"] == BENCH
    assert "role" not in raw.decode()  # no role chunk in completions
    assert comments(raw) == [": keep-alive"]


def test_stream_error_is_an_error_object_then_done() -> None:
    encoder = FMT.encoder(FMT.parse({"model": "m", "prompt": "Hi"}, {}), "bench/core")
    events = sse_events(encoder.start() + encoder.error(500, "the panel failed (X: y)"))
    assert events == [
        (None, {"error": {"message": "the panel failed (X: y)", "type": "bench_gateway", "code": 500}}),
        (None, "[DONE]"),
    ]


def test_error_body_is_openais() -> None:
    assert FMT.error_body(413, "too big") == {
        "error": {"message": "too big", "type": "bench_gateway", "code": 413}
    }
    assert FMT.routes == ("/v1/completions", "/completions")  # H-0: also without /v1
