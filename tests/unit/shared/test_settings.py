"""Bad settings stop a process at start with one line naming the variable, before anything starts."""

from __future__ import annotations

import pytest

from shared.settings import CallerSettings, GatewaySettings, SeaterSettings, settings_or_exit


@pytest.mark.parametrize(("kind", "variable", "value", "said"), [
    (SeaterSettings, "BENCH_REPLICAS", "three", "seater: BENCH_REPLICAS: Input should be a valid integer"),
    (CallerSettings, "BENCH_OPS_PORT", "70000", "caller: BENCH_OPS_PORT: Input should be less than"),
    (GatewaySettings, "BENCH_DRAIN_S", "-1", "gateway: BENCH_DRAIN_S: Input should be greater than"),
    (GatewaySettings, "BENCH_SEATER_PATIENCE_S", "soon", "gateway: BENCH_SEATER_PATIENCE_S: Input should"),
])
def test_a_bad_setting_is_one_line_naming_it(
    kind: type, variable: str, value: str, said: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, value)
    service = said.split(":")[0]
    with pytest.raises(SystemExit) as exited:
        settings_or_exit(kind, service)
    message = str(exited.value)
    assert message.startswith(said) and "\n" not in message


def test_good_settings_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_OPS_PORT", "9090")
    assert settings_or_exit(CallerSettings, "caller").ops_port == 9090
