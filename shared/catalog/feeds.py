"""The three public feeds (CAT-2) read into one entry shape: OpenRouter's model list, models.dev's
`api.json` and FreeLLMAPI's free catalog. A document that is not the shape its feed promises raises
`Malformed` (the refresh then keeps the previous entries); a single odd model in it is skipped. Pure."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from shared.model_facts import Cost

OPENROUTER = "openrouter"
MODELS_DEV = "models.dev"
FREELLMAPI = "freellmapi"
FEEDS = (OPENROUTER, MODELS_DEV, FREELLMAPI)


class Malformed(ValueError):
    """The document is not what its feed serves."""


class FeedEntry(BaseModel):
    """One model as one feed lists it, in the few fields the catalog and Discover read."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    provider: str  # models.dev's provider id; `openrouter`; FreeLLMAPI's provider
    id: str  # the model id as the provider serves it
    name: str = ""
    context_window: int | None = None
    max_output: int | None = None
    tools: bool | None = None
    vision: bool | None = None
    structured_output: bool | None = None
    reasoning: bool | None = None
    cost: Cost | None = None
    knowledge_cutoff: str | None = None
    free: bool = False  # listed by FreeLLMAPI, priced 0 by models.dev, or an id ending `:free`
    text_output: bool = True
    deprecated: bool = False
    base: str = ""  # the provider's OpenAI-compatible base URL, when the feed knows it


def positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def text(value: Any, most: int = 200) -> str:
    return value[:most] if isinstance(value, str) else ""


def part(parent: dict[str, Any], name: str) -> dict[str, Any]:
    """A nested object, or an empty one when the feed left it out or sent something else."""
    value = parent.get(name)
    return value if isinstance(value, dict) else {}


def _entries(items: Iterator[dict[str, Any]]) -> list[FeedEntry]:
    out = []
    for item in items:
        try:
            out.append(FeedEntry.model_validate(item))
        except ValidationError:
            continue
    return out


# ---------------------------------------------------------------- OpenRouter `GET /api/v1/models`


def openrouter(doc: Any) -> list[FeedEntry]:
    """`{"data": [{id, context_length, top_provider, architecture, supported_parameters, …}]}`; prices
    are not read (CAT-1: models.dev alone supplies cost)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise Malformed('expected {"data": [models]}')

    def each() -> Iterator[dict[str, Any]]:
        for m in doc["data"]:
            if not isinstance(m, dict) or not isinstance(m.get("id"), str):
                continue
            arch = part(m, "architecture")
            params = m.get("supported_parameters")
            params = set(params) if isinstance(params, list) else None
            top = part(m, "top_provider")
            inputs, outputs = arch.get("input_modalities"), arch.get("output_modalities")
            yield {
                "provider": OPENROUTER, "id": m["id"], "name": text(m.get("name")),
                "context_window": positive(m.get("context_length")) or positive(top.get("context_length")),
                "max_output": positive(top.get("max_completion_tokens")),
                "vision": ("image" in inputs) if isinstance(inputs, list) else None,
                "tools": ("tools" in params) if params is not None else None,
                "structured_output": bool({"response_format", "structured_outputs"} & params)
                if params is not None else None,
                "reasoning": bool({"reasoning", "include_reasoning"} & params)
                if params is not None else None,
                "knowledge_cutoff": text(m.get("knowledge_cutoff"), 10) or None,
                "free": m["id"].endswith(":free"),
                "text_output": "text" in outputs if isinstance(outputs, list) else True,
            }

    return _entries(each())


# ---------------------------------------------------------------- models.dev `api.json`


def _cost(raw: Any) -> Cost | None:
    if not isinstance(raw, dict):
        return None
    sides = raw.get("input"), raw.get("output")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in sides):
        return None
    return Cost(input=float(sides[0]), output=float(sides[1]))  # type: ignore[arg-type]


def models_dev(doc: Any) -> list[FeedEntry]:
    """`{provider: {id, api?, npm, models: {id: {limit, modalities, tool_call, attachment, cost, …}}}}`."""
    if not isinstance(doc, dict) or not any(isinstance(p, dict) and "models" in p for p in doc.values()):
        raise Malformed("expected {provider: {models: {…}}}")

    def each() -> Iterator[dict[str, Any]]:
        for key, provider in doc.items():
            if not isinstance(provider, dict) or not isinstance(provider.get("models"), dict):
                continue
            pid = text(provider.get("id")) or str(key)
            base = text(provider.get("api"), 300)
            for mid, m in provider["models"].items():
                if not isinstance(m, dict):
                    continue
                limit, modal = part(m, "limit"), part(m, "modalities")
                inputs, outputs = modal.get("input"), modal.get("output")
                cost = _cost(m.get("cost"))
                model_id = text(m.get("id")) or str(mid)
                yield {
                    "provider": pid, "id": model_id, "name": text(m.get("name")),
                    "context_window": positive(limit.get("context")),
                    "max_output": positive(limit.get("output")),
                    "tools": flag(m.get("tool_call")),
                    "vision": ("image" in inputs) if isinstance(inputs, list) else flag(m.get("attachment")),
                    "structured_output": flag(m.get("structured_output")),
                    "reasoning": flag(m.get("reasoning")),
                    "cost": cost, "knowledge_cutoff": text(m.get("knowledge"), 10) or None,
                    "free": (cost is not None and cost.free) or model_id.endswith(":free"),
                    "text_output": "text" in outputs if isinstance(outputs, list) else True,
                    "deprecated": m.get("status") == "deprecated", "base": base,
                }

    return _entries(each())


# ---------------------------------------------------------------- FreeLLMAPI `v1/latest`


def freellmapi(doc: Any) -> list[FeedEntry]:
    """Free models by provider: `{"providers": [{id, base_url?, models: [{id, context_window?} | id]}]}` (a
    bare list of providers is taken too). Every model listed is free."""
    providers = doc.get("providers") if isinstance(doc, dict) else doc
    if not isinstance(providers, list):
        raise Malformed('expected {"providers": [...]}')

    def each() -> Iterator[dict[str, Any]]:
        for p in providers:
            if not isinstance(p, dict) or not isinstance(p.get("models"), list):
                continue
            pid = (text(p.get("id")) or text(p.get("name"))).lower()
            base = text(p.get("base_url") or p.get("api"), 300)
            for m in p["models"]:
                item = {"id": m} if isinstance(m, str) else m
                if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not pid:
                    continue
                yield {
                    "provider": pid, "id": item["id"], "name": text(item.get("name")),
                    "context_window": positive(item.get("context_window") or item.get("context_length")),
                    "free": True, "base": base,
                }

    return _entries(each())


PARSERS: dict[str, Callable[[Any], list[FeedEntry]]] = {
    OPENROUTER: openrouter, MODELS_DEV: models_dev, FREELLMAPI: freellmapi,
}
