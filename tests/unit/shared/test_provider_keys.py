"""The one naming rule for provider key variables, as the callers read them and the gateway/CLI name them."""

from __future__ import annotations

from shared.provider_keys import key_variable


def test_key_variable_upper_cases_and_replaces_dashes() -> None:
    assert key_variable("open-router") == "BENCHWARMERS_KEY_OPEN_ROUTER"
    assert key_variable("groq") == "BENCHWARMERS_KEY_GROQ"
