"""`bench ask` without I/O: the prompt from words, piped stdin and files; the request body; and a streamed
panel read chunk by chunk into its text, its `bench` object and how many seats have answered."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

HEADING = re.compile(r"· (\d+) members? \+ (\d+) explorers?")
SECTION = "\n## "


def prompt_text(words: list[str], piped: str | None, files: list[tuple[str, str]]) -> str:
    """The words, then what was piped in (K-11: read even when words are given; `-` alone means stdin
    only), then each file as a fenced block named after it."""
    parts = [] if words == ["-"] else [" ".join(words).strip()]
    if piped and piped.strip():
        parts.append(piped.rstrip("\n"))
    parts += [f"`{name}`:\n```\n{text.rstrip()}\n```" for name, text in files]
    return "\n\n".join(p for p in parts if p)


def request_body(collection: str, prompt: str, system: str | None, reply: str | None, with_: list[str],
                 stream: bool) -> dict[str, Any]:
    name = collection if collection.startswith("bench/") else f"bench/{collection}"
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt})
    body: dict[str, Any] = {"model": name, "messages": messages, "stream": stream}
    if reply:
        body["bench"] = {"reply": reply}
    if with_:
        body["with"] = with_
    return body


@dataclass
class Progress:
    """What a streamed panel has said so far."""

    text: list[str] = field(default_factory=list)
    seats: int | None = None  # from the heading: members + explorers
    answered: int = 0
    bench: dict[str, Any] | None = None
    error: str = ""
    done: bool = False

    def feed(self, line: str) -> bool:
        """One line of the SSE stream; True when it changed what the progress line shows."""
        if not line.startswith("data:"):
            return False
        data = line[5:].strip()
        if data == "[DONE]":
            self.done = True
            return True
        try:
            chunk = json.loads(data)
        except ValueError:
            return False
        if isinstance(chunk.get("error"), dict):
            self.error = str(chunk["error"].get("message", "the panel failed"))
            return True
        if isinstance(chunk.get("bench"), dict):
            self.bench = chunk["bench"]
        for choice in chunk.get("choices") or []:
            piece = (choice.get("delta") or {}).get("content")
            if piece:
                self.piece(piece)
        return True

    def piece(self, piece: str) -> None:
        if not self.text and (found := HEADING.search(piece)):
            self.seats = int(found.group(1)) + int(found.group(2))
        elif piece.startswith(SECTION):
            self.answered += 1
        self.text.append(piece)

    def line(self, collection: str, seconds: float) -> str:
        of = f" of {self.seats}" if self.seats is not None else ""
        return f"bench: asking {collection}: {self.answered}{of} seats answered · {seconds:.0f} s"

    @property
    def content(self) -> str:
        return "".join(self.text)
