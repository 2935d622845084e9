"""`bench ask` without I/O: the prompt (K-11: piped stdin is read even with words) and a streamed panel
read into its text, its `bench` and how many seats have answered."""

from __future__ import annotations

import json

from cli.asking import Progress, prompt_text, request_body


def test_piped_stdin_joins_the_words_and_files_follow_fenced() -> None:
    assert prompt_text(["review", "this"], "diff --git a b\n", []) == "review this\n\ndiff --git a b"
    assert prompt_text(["-"], "only stdin\n", []) == "only stdin"
    assert prompt_text([], None, [("notes.md", "hello\n")]) == "`notes.md`:\n```\nhello\n```"
    assert prompt_text([], "  \n", []) == ""


def test_the_body_names_the_collection_and_only_what_was_asked() -> None:
    body = request_body("core", "hi", None, None, [], True)
    assert body == {"model": "bench/core", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    full = request_body("bench/core", "hi", "be brief", "merged", ["x"], False)
    assert full["messages"][0] == {"role": "system", "content": "be brief"}
    assert (full["bench"], full["with"], full["model"]) == ({"reply": "merged"}, ["x"], "bench/core")


def chunk(content: str | None = None, **extra: object) -> str:
    delta = {"content": content} if content is not None else {}
    return "data: " + json.dumps({"choices": [{"delta": delta}], **extra})


def test_a_stream_counts_seats_as_their_sections_land() -> None:
    progress = Progress()
    lines = [
        ": keep-alive",
        chunk(""),
        chunk("Bench bench/c p1 · 2 members + 1 explorers · explorer shape x\n"),
        chunk("\n## member — a\n\nA"),
        chunk("\n## explorer — c\n\nC"),
        chunk("\n---\nfooter"),
        chunk(bench={"panel": "p1", "seats": []}),
        "data: [DONE]",
    ]
    for line in lines[:4]:
        progress.feed(line)
    assert (progress.seats, progress.answered) == (3, 1)
    assert progress.line("bench/c", 4.2) == "bench: asking bench/c: 1 of 3 seats answered · 4 s"
    for line in lines[4:]:
        progress.feed(line)
    assert progress.done and progress.answered == 2 and progress.bench == {"panel": "p1", "seats": []}
    assert progress.content.endswith("footer") and progress.content.startswith("Bench bench/c")


def test_an_error_in_the_stream_is_kept() -> None:
    progress = Progress()
    progress.feed('data: {"error": {"message": "the panel failed"}}')
    assert progress.error == "the panel failed" and not progress.done
