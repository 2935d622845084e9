"""A suite pass needs callers and the fake provider: the caller tests' fixtures, reused."""

from tests.integration.caller.conftest import callers, provider, saved_endpoints

__all__ = ["callers", "provider", "saved_endpoints"]
