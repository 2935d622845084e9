"""Path convertors the routes name (registered with the framework on import). Each says exactly which paths
its route takes, so that the route table can tell 405 (the path exists, not for this method) from 404, and
Gemini's two routes under `/models/` never claim the same path."""

from __future__ import annotations

from starlette.convertors import Convertor, register_url_convertor

from services.gateway.formats.gemini import GEMINI_CALL, GEMINI_MODEL

ANYTHING = "anything"
# A call is `<model>:<method>` with any method but a reply mode (an unknown method is the route's own 404);
# a model id is anything that does not end in one of the methods a call serves.
CALL = r"[\s\S]*:(?!(all|merged|route)$)[A-Za-z]+"
MODEL = r"(?![\s\S]*:(generateContent|streamGenerateContent|countTokens)$)[\s\S]+"


class Pattern(Convertor[str]):
    def __init__(self, regex: str) -> None:
        self.regex = regex  # type: ignore[misc]  # the framework reads it per instance

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


# `anything`: control characters too (`path` stops at a newline, leaving the framework's plain-text 404).
for name, regex in ((ANYTHING, r"[\s\S]*"), (GEMINI_CALL, CALL), (GEMINI_MODEL, MODEL)):
    register_url_convertor(name, Pattern(regex))
