"""CAT-1/CAT-2: the recorded feed documents read into entries and merged into one model's facts by the
SPEC's precedence; names matched after normalising."""

from __future__ import annotations

import pytest

from shared.catalog.feeds import FREELLMAPI, MODELS_DEV, OPENROUTER, PARSERS, Malformed
from shared.catalog.merge import Catalog, facts_for
from shared.catalog.names import normalise
from shared.commands import ListedModel
from shared.events import EndpointSaved
from shared.model_facts import Cost
from tests.fixtures.catalog import document


def recorded() -> Catalog:
    return Catalog({feed: PARSERS[feed](document(feed)) for feed in (OPENROUTER, MODELS_DEV, FREELLMAPI)})


def endpoint(name: str, base: str) -> EndpointSaved:
    return EndpointSaved(id=f"cfg:{name}", name=name, base=base)


OPENROUTER_EP = endpoint("openrouter", "https://openrouter.ai/api/v1")
OPENAI_EP = endpoint("openai", "https://api.openai.com/v1")
GROQ_EP = endpoint("fast", "https://api.groq.com/openai/v1")  # matched by its base URL, not its name
CEREBRAS_EP = endpoint("cerebras", "https://api.cerebras.ai/v1")


@pytest.mark.parametrize(("name", "expected"), [
    ("meta-llama/Llama-3.3-70B-Instruct:free", "llama-3.3-70b-instruct"),
    ("us.anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic.claude-3-5-sonnet"),
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
    ("claude-3-7-sonnet@20250219", "claude-3-7-sonnet"),
    ("gemini-flash-latest", "gemini-flash"),
    ("o3-mini-high", "o3-mini"),
    ("deepseek-r1-0528", "deepseek-r1"),
])
def test_names_are_normalised_as_cat2_says(name: str, expected: str) -> None:
    assert normalise(name) == expected


def test_the_recorded_documents_parse_and_odd_entries_are_skipped() -> None:
    catalog = recorded()
    assert sorted(catalog.openrouter) == ["broken/entry", "deepseek/deepseek-r1:free",
                                          "meta-llama/llama-3.3-70b-instruct:free", "openai/gpt-4o-mini"]
    assert catalog.openrouter["broken/entry"].context_window is None  # a window of "lots" is no window
    assert catalog.dev["openrouter"]["deepseek/deepseek-r1:free"].free
    assert catalog.dev["groq"]["mixtral-8x7b-32768"].deprecated
    assert not catalog.dev["openai"]["text-embedding-3-small"].text_output
    assert catalog.bases()["cerebras"] == "https://api.cerebras.ai/v1"


@pytest.mark.parametrize("feed", [OPENROUTER, MODELS_DEV, FREELLMAPI])
def test_a_document_of_another_shape_is_malformed(feed: str) -> None:
    with pytest.raises(Malformed):
        PARSERS[feed](["an", "array"] if feed != FREELLMAPI else {"models": "none"})


def test_models_dev_same_id_beats_openrouter_and_alone_gives_the_cost() -> None:
    facts = facts_for("openai/gpt-4o-mini", OPENROUTER_EP, recorded())
    assert (facts.max_output, facts.sources["max_output"]) == (16_000, "models.dev")  # not OpenRouter's 16384
    assert facts.cost == Cost(input=0.15, output=0.6) and facts.sources["cost"] == "models.dev"
    assert facts.knowledge_cutoff == "2023-10"
    assert facts.vision is True


def test_models_dev_by_name_only_fills_the_gaps_openrouter_left() -> None:
    facts = facts_for("openai/gpt-4o-mini", OPENAI_EP, recorded())
    assert (facts.max_output, facts.sources["max_output"]) == (16_384, "openrouter")
    assert (facts.knowledge_cutoff, facts.sources["knowledge_cutoff"]) == ("2023-09", "models.dev")
    assert facts.cost == Cost(input=0.15, output=0.6)


def test_a_free_openrouter_model_gets_models_devs_window_and_a_zero_cost() -> None:
    facts = facts_for("meta-llama/llama-3.3-70b-instruct:free", OPENROUTER_EP, recorded())
    assert facts.context_window == 131_072 and facts.sources["context_window"] == "models.dev"
    assert facts.cost is not None and facts.cost.free
    r1 = facts_for("deepseek/deepseek-r1:free", OPENROUTER_EP, recorded())
    assert (r1.reasoning, r1.tools) == (True, False)


def test_another_providers_entry_only_fills_gaps_and_never_gives_a_price() -> None:
    facts = facts_for("gpt-oss-120b", CEREBRAS_EP, recorded())
    assert facts.context_window == 131_072 and facts.sources["context_window"] == "models.dev (openai)"
    assert facts.tools is True and facts.cost is None  # openai's price is not cerebras's


def test_freellmapi_gives_a_window_only_where_none_is_known() -> None:
    scout = facts_for("llama-4-scout-17b-16e-instruct", CEREBRAS_EP, recorded())
    assert (scout.context_window, scout.sources["context_window"]) == (32_768, "freellmapi")
    versatile = facts_for("llama-3.3-70b-versatile", GROQ_EP, recorded())
    assert versatile.sources["context_window"] == "models.dev"  # FreeLLMAPI's is not taken over it
    assert versatile.cost == Cost(input=0.59, output=0.79)


def test_the_endpoints_own_listing_beats_every_feed() -> None:
    listed = ListedModel(id="llama-3.3-70b-versatile", context_window=8_192)
    facts = facts_for("llama-3.3-70b-versatile", GROQ_EP, recorded(), listed)
    assert (facts.context_window, facts.sources["context_window"]) == (8_192, "listing")
    assert facts.tools is True


def test_an_unknown_model_has_no_facts() -> None:
    assert facts_for("acme/unheard-of", OPENAI_EP, recorded()).known() == {}
