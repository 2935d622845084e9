"""CAT-1: one model's facts from the feeds, by the SPEC's precedence, low to high: (1) OpenRouter's list
matched by served id (or the id without `:free`); (2) models.dev's entry of the provider that serves it,
which beats OpenRouter only on a same-id match, else fills gaps, and alone gives the cost; models.dev
entries of other providers only fill gaps; (3) FreeLLMAPI, a context window only where none; (4) the
serving endpoint's own listing beats all. Pure.

`facts_for` is the seam onboarding uses to register a new model with its facts filled in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from urllib.parse import urlsplit

from shared.catalog.feeds import FREELLMAPI, MODELS_DEV, OPENROUTER, FeedEntry
from shared.catalog.names import normalise, without_free
from shared.commands import ListedModel
from shared.events import EndpointSaved
from shared.model_facts import ModelFacts, overlay, stamped

FACT_FIELDS = ("context_window", "max_output", "tools", "vision", "structured_output", "reasoning",
               "knowledge_cutoff")


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


class Catalog:
    """The feeds' entries with the lookups CAT-1 and CAT-4 need."""

    def __init__(self, feeds: Mapping[str, list[FeedEntry]]) -> None:
        self.feeds = {name: list(entries) for name, entries in feeds.items()}
        self.openrouter = {e.id: e for e in self.feeds.get(OPENROUTER, [])}
        self.dev: dict[str, dict[str, FeedEntry]] = defaultdict(dict)
        self.dev_named: dict[str, list[FeedEntry]] = defaultdict(list)
        for e in self.feeds.get(MODELS_DEV, []):
            self.dev[e.provider][e.id] = e
            self.dev_named[normalise(e.id)].append(e)
        self.free_named: dict[str, list[FeedEntry]] = defaultdict(list)
        for e in self.feeds.get(FREELLMAPI, []):
            self.free_named[normalise(e.id)].append(e)

    def bases(self) -> dict[str, str]:
        """Provider → its OpenAI-compatible base URL, where a feed knows one."""
        found: dict[str, str] = {}
        for name in (FREELLMAPI, MODELS_DEV):
            for e in self.feeds.get(name, []):
                if e.base:
                    found[e.provider] = e.base
        return found

    def provider_for(self, endpoint: EndpointSaved) -> str | None:
        """Which models.dev provider serves an endpoint: OpenRouter by its host, else a provider of the
        endpoint's name, else the provider whose base URL has the endpoint's host."""
        host = host_of(endpoint.base)
        if host == "openrouter.ai" or host.endswith(".openrouter.ai"):
            return OPENROUTER
        if endpoint.name.lower() in self.dev:
            return endpoint.name.lower()
        return next((p for p, base in self.bases().items() if host and host_of(base) == host), None)

    def openrouter_entry(self, served: str) -> FeedEntry | None:
        bare = without_free(served)
        return self.openrouter.get(served) or self.openrouter.get(bare) or self.openrouter.get(f"{bare}:free")

    def own_entry(self, provider: str | None, served: str) -> tuple[FeedEntry | None, bool]:
        """The serving provider's models.dev entry, and whether it matched by the same id."""
        listed = self.dev.get(provider or "", {})
        same = listed.get(served) or listed.get(without_free(served))
        if same is not None:
            return same, True
        name = normalise(served)
        return next((e for e in listed.values() if normalise(e.id) == name), None), False


def entry_facts(entry: FeedEntry, source: str) -> ModelFacts:
    return stamped({name: getattr(entry, name) for name in FACT_FIELDS}, source)


def fill(facts: ModelFacts, gaps: ModelFacts) -> ModelFacts:
    """`gaps`' values only where `facts` has none."""
    return overlay(gaps, facts, "")


def facts_for(served: str, endpoint: EndpointSaved, catalog: Catalog,
              listed: ListedModel | None = None) -> ModelFacts:
    """The catalog's facts for `served` on `endpoint`, each with its feed (C-15, CAT-1)."""
    facts = ModelFacts()
    routed = catalog.openrouter_entry(served)
    if routed is not None:
        facts = entry_facts(routed, OPENROUTER)
    provider = catalog.provider_for(endpoint)
    own, same_id = catalog.own_entry(provider, served)
    if own is not None:
        own_facts = entry_facts(own, MODELS_DEV)
        facts = overlay(facts, own_facts, MODELS_DEV) if same_id else fill(facts, own_facts)
        if own.cost is not None:
            facts = overlay(facts, stamped({"cost": own.cost}, MODELS_DEV), MODELS_DEV)
    for other in catalog.dev_named.get(normalise(served), []):
        if other.provider != provider:
            facts = fill(facts, entry_facts(other, f"{MODELS_DEV} ({other.provider})"))
    for free in catalog.free_named.get(normalise(served), []):
        if facts.context_window is None and free.context_window:
            facts = fill(facts, stamped({"context_window": free.context_window}, FREELLMAPI))
    if listed is not None:
        own_listing = stamped({"context_window": listed.context_window, "max_output": listed.max_output},
                              "listing")
        facts = overlay(facts, own_listing, "listing")
    return facts
