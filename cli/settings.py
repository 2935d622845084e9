"""The `bench` process's settings: where the server is and which secrets to show it (SPEC CLI-2).

`bench up` has its own: where the data lives, the gateway port, how many seaters and an optional external
NATS. It also reads every service's settings before it starts anything, so a bad one stops it at once with
one line naming the variable.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared.settings import (
    CallerSettings,
    GatewaySettings,
    LedgerSettings,
    ProberSettings,
    SeaterSettings,
    default_home,
)

DEFAULT_URL = "http://127.0.0.1:8122"


def normalise_url(url: str) -> str:
    """`http://host:8122/v1/` → `http://host:8122`: people paste the OpenAI base URL."""
    url = url.strip().rstrip("/")
    return url.removesuffix("/v1").rstrip("/")


class ClientSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    url: str = Field(default=DEFAULT_URL, validation_alias=AliasChoices("BENCHWARMERS_URL"))
    # Sent only to admin routes (`/api/…`).
    admin_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("BENCHWARMERS_ADMIN_TOKEN")
    )
    # Sent only to gateway routes (`/v1/…`, `/bench/…`).
    key: SecretStr | None = Field(default=None, validation_alias=AliasChoices("BENCHWARMERS_KEY"))
    timeout_s: float = Field(default=900.0, validation_alias=AliasChoices("BENCHWARMERS_TIMEOUT"))

    @field_validator("url")
    @classmethod
    def _normalise(cls, value: str) -> str:
        return normalise_url(value)


class UpSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    home: Path = Field(default_factory=default_home, validation_alias=AliasChoices("BENCHWARMERS_HOME"))
    port: int = Field(default=8122, ge=1, le=65535, validation_alias=AliasChoices("BENCH_PORT"))
    # Two, so a seater that dies is not a gap (its panels go to the other); each leases one of the 15 slots
    # of panel ids, so more would share the drawn block.
    seaters: int = Field(default=2, ge=1, le=15, validation_alias=AliasChoices("BENCH_SEATERS"))
    # Unset: `bench up` runs its own NATS with the JetStream store under `home`.
    nats_url: str | None = Field(default=None, validation_alias=AliasChoices("NATS_URL"))
    # The services' NATS seeds (`<home>/bus` unset; made there by the embedded NATS).
    nats_credentials: Path | None = Field(
        default=None, validation_alias=AliasChoices("BENCH_NATS_CREDENTIALS")
    )
    start_timeout_s: float = Field(default=120.0, gt=0, validation_alias=AliasChoices("BENCH_START_TIMEOUT"))
    # The services but the callers forked from one image of their shared imports (`shared.zygote`, Linux);
    # false: each starts an interpreter of its own, as `python -m services.<name>` does in a container.
    fork_services: bool = Field(default=True, validation_alias=AliasChoices("BENCH_FORK_SERVICES"))


SERVICE_SETTINGS: tuple[type[BaseSettings], ...] = (
    GatewaySettings, SeaterSettings, CallerSettings, LedgerSettings, ProberSettings,
)


def variable(model: type[BaseSettings], loc: tuple[int | str, ...]) -> str:
    """The environment variable behind an error's location: its alias, or the prefix and the field name."""
    name = str(loc[0]) if loc else "?"
    if name not in model.model_fields:
        return name
    return f"{model.model_config.get('env_prefix', '')}{name}".upper()


def up_settings() -> UpSettings:
    """`bench up`'s settings, after reading every service's too (they get this environment); a bad value
    raises `ValueError` with one line naming the variable (never its value: it may be a secret)."""
    models: tuple[type[BaseSettings], ...] = (UpSettings, *SERVICE_SETTINGS)
    for model in models:
        try:
            model()
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ValueError(f"setting {variable(model, first['loc'])}: {first['msg']}") from None
    return UpSettings()
