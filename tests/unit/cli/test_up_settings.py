"""`bench up` reads its own and every service's settings first: a bad one is one line naming the variable."""

from __future__ import annotations

import pytest

from cli.settings import up_settings

CLEAN = ("BENCH_PORT", "BENCH_SEATERS", "BENCH_CONCURRENCY", "BENCH_START_TIMEOUT", "BENCH_LINGER_S")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CLEAN:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(("name", "value", "says"), [
    ("BENCH_PORT", "80a", "setting BENCH_PORT: Input should be a valid integer"),
    ("BENCH_PORT", "70000", "setting BENCH_PORT: Input should be less than or equal to 65535"),
    ("BENCH_SEATERS", "0", "setting BENCH_SEATERS: Input should be greater than or equal to 1"),
    ("BENCH_START_TIMEOUT", "-1", "setting BENCH_START_TIMEOUT: Input should be greater than 0"),
    ("BENCH_CONCURRENCY", "many", "setting BENCH_CONCURRENCY: Input should be a valid integer"),
    ("BENCH_LINGER_S", "soon", "setting BENCH_LINGER_S: Input should be a valid number"),
])
def test_a_bad_value_names_its_variable_and_not_its_value(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, says: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError) as raised:
        up_settings()
    message = str(raised.value)
    assert message.startswith(says) and "\n" not in message
    assert value not in message


def test_two_seaters_by_default_and_the_count_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert up_settings().seaters == 2
    monkeypatch.setenv("BENCH_SEATERS", "3")
    assert up_settings().seaters == 3
