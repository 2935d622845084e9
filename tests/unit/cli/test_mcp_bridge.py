"""What `bench mcp` tells an agent when the gateway refuses or cannot be reached (MCP-2), without I/O."""

from __future__ import annotations

from pathlib import Path

from cli.mcp_bridge import innermost, local_pending, refusal_words, unreachable


def test_a_refusal_is_told_in_the_gateways_own_words() -> None:
    guard = b'{"error": {"message": "that gateway key is unknown or revoked"}}'
    assert refusal_words(guard) == "that gateway key is unknown or revoked"
    parse = b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}'
    assert refusal_words(parse) == "Parse error"
    assert refusal_words(b'{"error": "plain"}') == "plain"
    assert refusal_words(b"<html>" + b"x" * 500) == ("<html>" + "x" * 500)[:300]


def test_no_gateway_is_said_with_the_url_and_the_first_real_failure() -> None:
    wrapped = ExceptionGroup("tg", [ExceptionGroup("inner", [ConnectionRefusedError("refused")])])
    failure = innermost(wrapped)
    assert isinstance(failure, ConnectionRefusedError)
    said = unreachable("http://127.0.0.1:9", failure)
    assert said.startswith("Benchwarmers: no gateway answered at http://127.0.0.1:9/mcp (ConnectionRefused")
    assert "BENCHWARMERS_URL" in said


def test_the_transcript_is_read_here_and_only_its_ids_go_on(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"seat": "p20260101-120000-ab12.member1"}\n')
    sent = local_pending({"session": "s", "transcript": str(transcript), "active": False})
    assert sent == {"session": "s", "active": False, "calls": ["p20260101-120000-ab12.member1"]}
    assert local_pending({"session": "s", "transcript": str(tmp_path / "none.jsonl")}) is None
    given = {"session": "s", "calls": ["x"]}
    assert local_pending(given) == given
