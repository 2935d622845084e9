"""The `bench` process's settings: where the server is and which secrets to show it (SPEC CLI-2).

`bench up` has its own: where the data lives, the gateway port and an optional external NATS.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared.settings import default_home

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
    port: int = Field(default=8122, validation_alias=AliasChoices("BENCH_PORT"))
    # Unset: `bench up` runs its own NATS with the JetStream store under `home`.
    nats_url: str | None = Field(default=None, validation_alias=AliasChoices("NATS_URL"))
    # The services' NATS seeds (`<home>/bus` unset; made there by the embedded NATS).
    nats_credentials: Path | None = Field(
        default=None, validation_alias=AliasChoices("BENCH_NATS_CREDENTIALS")
    )
    start_timeout_s: float = Field(default=120.0, validation_alias=AliasChoices("BENCH_START_TIMEOUT"))
