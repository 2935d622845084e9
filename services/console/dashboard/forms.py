"""The dashboard's forms: what each one sends, turned into the admin API's body, and the API's refusals put
beside the field they are about. Pure: the rules themselves stay in the admin API (`admin.rules` and its
schemas), which every form goes through, so a form refuses exactly what the API refuses.

A browser sends every field as text (htmx, as JSON); an empty field means "not given".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["text", "int", "number", "bool", "list", "words", "lines"]
FORM_LEVEL = ""  # errors about no one field are shown above the form


@dataclass(frozen=True)
class Form:
    """One form: its fields in the order shown, each with how its text becomes the API's value."""

    action: str
    fields: Mapping[str, Kind]
    blank_clears: frozenset[str] = frozenset()  # sent empty, these clear the value ("" or [])
    # (pattern, field): a refusal matching the pattern is shown beside that field, before names are tried
    where: tuple[tuple[str, str], ...] = ()
    stale_when_missing: bool = True  # a 404 means the page acted on something gone (not a field's value)


@dataclass
class Filled:
    """A form as sent: the API body made of it, and the errors found before the API was asked."""

    body: dict[str, Any]
    errors: dict[str, list[str]]

    @property
    def ok(self) -> bool:
        return not any(self.errors.values())


FORMS: dict[str, Form] = {form.action: form for form in (
    Form("endpoint", {"name": "text", "base": "text", "test": "bool"}),
    Form("endpoint-test", {"name": "text"}),
    Form("model", {"served": "text", "endpoint": "text", "alias": "text", "tools": "bool", "vision": "bool"}),
    Form("collection", {"name": "text", "members": "list", "reply": "text", "merger": "text",
                        "shadows": "list", "description": "text"},
         blank_clears=frozenset({"merger", "shadows", "description"})),
    Form("collection-remove", {"name": "text"}),
    Form("ask", {"collection": "text", "prompt": "text"}),
    Form("verdict", {"call": "text", "useful": "bool", "note": "text", "real": "lines", "false": "lines"}),
    Form("retry", {"alias": "text"}),
    Form("retire", {"alias": "text", "reason": "text"}),
    Form("restore", {"alias": "text"}),
    Form("key", {"name": "text", "collections": "list", "rpm": "int"}),
    Form("key-revoke", {"name": "text"}),
    Form("limits", {"connection": "text", "rpm": "int", "rpd": "int", "tpm": "int", "tpd": "int",
                    "rpmo": "int"}),
    Form("scheduler", {"mode": "text"}),
    Form("settings", {"max_calls": "int", "max_explorers": "int"}),
    Form("onboard", {"served": "words", "endpoint": "text", "mode": "text"}, where=(
        (r"no endpoint |model list failed", "endpoint"), (r"mode must be", "mode"),
        (r"does not list|picked twice|already queued|already registered|was retired|not a served id|items",
         "served")), stale_when_missing=False),
    Form("onboard-stop", {}),
    Form("onboard-clear", {}),
    Form("dismiss", {"served": "text", "undo": "bool"}),
    Form("discover-add", {"provider": "text", "model": "text", "endpoint": "text", "mode": "text"},
         where=((r".", FORM_LEVEL),), stale_when_missing=False),
    Form("catalog-refresh", {}),
    Form("facts", {"alias": "text", "context_window": "int", "max_output": "int", "tools": "bool",
                   "vision": "bool", "structured_output": "bool", "reasoning": "bool", "cost_input": "number",
                   "cost_output": "number", "knowledge_cutoff": "text"},
         where=((r"cost", "cost_input"), (r"nothing to set", FORM_LEVEL))),
    Form("facts-clear", {"alias": "text", "fact": "text"}),
)}
BOOL_WORDS = {"on": True, "true": True, "yes": True, "1": True, "off": False, "false": False, "no": False,
              "0": False}


def text_of(value: Any) -> str:
    if isinstance(value, list):  # a field sent twice (a checkbox beside a hidden default): the last wins
        value = value[-1] if value else ""
    return "" if value is None else str(value).strip()


def converted(kind: Kind, text: str) -> tuple[Any, str | None]:
    """The API's value for one field's text, or why the text cannot be one."""
    if kind == "int":
        return (int(text), None) if re.fullmatch(r"-?\d{1,12}", text) else (None, "must be a whole number")
    if kind == "bool":
        if text.lower() not in BOOL_WORDS:
            return None, "must be yes or no"
        return BOOL_WORDS[text.lower()], None
    if kind == "number":
        number = re.fullmatch(r"\d{1,9}(\.\d{1,9})?", text)
        return (float(text), None) if number else (None, "must be a number")
    if kind == "list":
        return [part.strip() for part in text.split(",") if part.strip()], None
    if kind == "words":  # several ids at once: commas, spaces or lines between them
        return [part for part in re.split(r"[\s,]+", text) if part], None
    if kind == "lines":
        return [line.strip() for line in text.splitlines() if line.strip()], None
    return text, None


def fill(form: Form, sent: Mapping[str, Any]) -> Filled:
    """The API body: every field given, converted; a field left empty is left out."""
    body: dict[str, Any] = {}
    errors: dict[str, list[str]] = {}
    for name, kind in form.fields.items():
        text = text_of(sent.get(name))
        if not text:
            if name in form.blank_clears and name in sent:
                body[name] = [] if kind == "list" else ""
            continue
        value, problem = converted(kind, text)
        if problem:
            errors.setdefault(name, []).append(problem)
        else:
            body[name] = value
    return Filled(body, errors)


def place(form: Form, errors: Sequence[str]) -> dict[str, list[str]]:
    """Each of the API's reasons beside the field it names (`"members"`, `merger …`), else above the form.
    The longest field name is tried first, so `max_explorers` is not taken for `max_calls`."""
    placed: dict[str, list[str]] = {}
    names = sorted(form.fields, key=len, reverse=True)
    for error in errors:
        where = next((f for pattern, f in form.where if re.search(pattern, error)), None)
        if where is None:
            where = next((n for n in names if mentions(error, n)), FORM_LEVEL)
        placed.setdefault(where, []).append(error)
    return placed


def mentions(error: str, name: str) -> bool:
    """`members` is named by "members" and by "member 'x' is not …"."""
    words = {name, name[:-1]} if name.endswith("s") and len(name) > 3 else {name}
    return any(re.search(rf'(?<![\w-])"?{re.escape(w)}"?(?![\w-])', error) for w in words)


def pydantic_errors(errors: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """A schema refusal (the admin API's strict body models) beside its field; the value is never echoed."""
    placed: dict[str, list[str]] = {}
    for error in errors:
        loc = [str(part) for part in error.get("loc", ())]
        where = loc[0] if loc else FORM_LEVEL
        text = str(error.get("msg", "is not valid"))
        if error.get("type") == "extra_forbidden":
            where, text = FORM_LEVEL, f"unknown field {'.'.join(loc)}"
        placed.setdefault(where, []).append(text)
    return placed


def on_fields(form: Form, errors: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """Errors about a field the form does not show (one its handler made up) go above the form."""
    placed: dict[str, list[str]] = {}
    for name, texts in errors.items():
        where = name if name in form.fields or name == FORM_LEVEL else FORM_LEVEL
        placed.setdefault(where, []).extend(texts if where == name else [f"{name}: {t}" for t in texts])
    return placed
