"""What an endpoint serves (C-3): the `/models` request of each API kind and how its answer reads. Pure.

Gemini asks `?pageSize=1000`, keeps only models that can `generateContent` and strips `models/`; any kind's
entry whose `visibility` is not `list` is dropped. Anthropic and Gemini page: the next page's URL is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from services.caller import anthropic_messages
from services.caller.wire import UpstreamRequest, auth_headers, endpoint_url, json_object
from shared.commands import ListedModel, ModelsRequest

PAGE_SIZE = {"gemini": ("pageSize", "1000"), "anthropic": ("limit", "1000")}
PAGE_TOKEN = {"gemini": "pageToken", "anthropic": "after_id"}


@dataclass
class Page:
    models: list[ListedModel] = field(default_factory=list)
    next: str = ""  # the token of the next page, empty on the last
    error: str = ""


def models_url(req: ModelsRequest, page: str = "") -> str:
    url = req.models_url or endpoint_url(req.base, "models")
    query = [PAGE_SIZE[req.api]] if req.api in PAGE_SIZE else []
    if page and req.api in PAGE_TOKEN:
        query.append((PAGE_TOKEN[req.api], page))
    if not query:
        return url
    return f"{url}{'&' if '?' in url else '?'}{urlencode(query)}"


def models_request(req: ModelsRequest, key: str | None, page: str = "") -> UpstreamRequest:
    headers = {"User-Agent": "benchwarmers", "Accept": "application/json", **req.headers,
               **auth_headers(req.api, key)}
    if req.api == "anthropic":
        headers.setdefault("anthropic-version", anthropic_messages.VERSION)
    return UpstreamRequest(url=models_url(req, page), headers=headers, method="GET")


def listed(entry: dict[str, Any]) -> bool:
    return entry.get("visibility", "list") == "list"


def parse_models(api: str, raw: bytes) -> Page:
    data, failed = json_object(raw)
    if failed is not None:
        return Page(error=failed.error)
    if not isinstance(data, dict):
        return Page(error="Error: client failed: the model list is not a JSON object")
    if api == "gemini":
        return gemini_page(data)
    entries = [e for e in data.get("data") or [] if isinstance(e, dict) and e.get("id") and listed(e)]
    models = [ListedModel(id=str(e["id"]), name=str(e.get("display_name") or e.get("name") or ""),
                          context_window=_int(e.get("context_length") or e.get("context_window")))
              for e in entries]
    more = api == "anthropic" and bool(data.get("has_more")) and bool(data.get("last_id"))
    return Page(models=models, next=str(data["last_id"]) if more else "")


def gemini_page(data: dict[str, Any]) -> Page:
    models = []
    for entry in data.get("models") or []:
        if not isinstance(entry, dict) or not listed(entry):
            continue
        if "generateContent" not in (entry.get("supportedGenerationMethods") or []):
            continue
        models.append(ListedModel(id=str(entry.get("name", "")).removeprefix("models/"),
                                  name=str(entry.get("displayName") or ""),
                                  context_window=_int(entry.get("inputTokenLimit")),
                                  max_output=_int(entry.get("outputTokenLimit"))))
    return Page(models=models, next=str(data.get("nextPageToken") or ""))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and value > 0 else None
