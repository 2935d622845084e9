"""Fakes that stand in for the outside world in tests: an OpenAI-compatible provider."""
