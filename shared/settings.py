"""Typed settings, one object per process, read from the environment.

Names follow SPEC: `NATS_URL` points everything at an existing NATS; `BENCHWARMERS_HOME` is the data
folder; service knobs use the `BENCH_` prefix.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Literal, TypeVar

from platformdirs import user_data_dir
from pydantic import AliasChoices, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared.bus_credentials import BusLogin


def default_home() -> Path:
    return Path(user_data_dir("benchwarmers", appauthor=False))


S = TypeVar("S", bound=BaseSettings)


def settings_or_exit(kind: type[S], service: str) -> S:
    """The process's settings, or an exit with one line naming the first setting at fault (its variable),
    before anything starts."""
    try:
        return kind()
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else ""
        raise SystemExit(f"{service}: {setting_name(kind, field)}: {error['msg']}") from None


def setting_name(kind: type[BaseSettings], field: str) -> str:
    """The environment variable a field is read from (its alias when it has one)."""
    info = kind.model_fields.get(field)
    alias = info.validation_alias if info is not None else None
    if isinstance(alias, AliasChoices):
        return str(alias.choices[-1])
    if isinstance(alias, str):
        return alias
    prefix = str(kind.model_config.get("env_prefix", ""))
    return f"{prefix}{field}".upper()


def instance_name(service: str) -> str:
    return f"{service}-{socket.gethostname()}-{os.getpid()}"


class BusSettings(BaseSettings):
    """What every service needs to reach the bus."""

    model_config = SettingsConfigDict(env_prefix="BENCH_", extra="ignore", populate_by_name=True)

    nats_url: str = Field(
        default="nats://127.0.0.1:4222", validation_alias=AliasChoices("NATS_URL", "BENCH_NATS_URL")
    )
    home: Path = Field(default_factory=default_home, validation_alias=AliasChoices("BENCHWARMERS_HOME"))
    log_level: str = "INFO"
    # The folder of `<role>.nk` seeds this process logs in to NATS with (a Kubernetes Secret mounts one
    # file); `bench up` makes $BENCHWARMERS_HOME/bus once and reuses it.
    nats_credentials: Path | None = Field(
        default=None, validation_alias=AliasChoices("BENCH_NATS_CREDENTIALS")
    )
    # With TLS to NATS (a `tls://` URL), the CA certificate that signed the server's.
    nats_tls_ca: Path | None = None
    # Replicas of streams and buckets: 1 on a laptop, 3 on a Kubernetes NATS cluster.
    replicas: int = Field(default=1, ge=1, le=5)
    # The operations port (/healthz, /readyz, /metrics); 0 serves none. Kubernetes sets 9090 on every pod.
    ops_port: int = Field(default=0, ge=0, le=65535)
    ops_bind: str = "127.0.0.1"
    # On SIGTERM: how long work in flight may take to finish before the process leaves (the pod's grace
    # period is this plus the preStop pause and a margin).
    drain_s: float = Field(default=60.0, ge=0, le=3600)

    def credentials_folder(self) -> Path:
        return self.nats_credentials or self.home / "bus"

    def bus_login(self, role: str) -> BusLogin:
        """This process's NATS login; `CredentialsError` names what is missing and where it is read from."""
        return BusLogin.load(self.credentials_folder(), role, self.nats_tls_ca)


class GatewaySettings(BusSettings):
    port: int = 8122
    bind: str = "127.0.0.1"
    seat_deadline_s: float = 420.0
    stream_grace_s: float = 1.0
    keepalive_s: float = 10.0
    # How often a panel looks in the event stream for a seat whose completion it may have missed (a reconnect
    # triggers a look at once).
    seat_recheck_s: float = 15.0
    # Route mode (RM-6): a member silent this long before any text, reasoning or tool call is failed over; a
    # streamed 200 waits up to the grace for the first piece; the whole turn ends by the deadline.
    route_first_piece_s: float = 90.0
    route_grace_s: float = 15.0
    # How long a panel or a route turn keeps asking when no seater answers (one restarting, or its twin
    # taking over) before the client hears a 503.
    seater_patience_s: float = Field(default=10.0, ge=0, le=120)
    route_deadline_s: float = 600.0
    # SEC-1..SEC-5: who may call. A token opens the admin API and makes gateway keys required.
    admin_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("BENCHWARMERS_ADMIN_TOKEN")
    )
    require_keys: str = Field(default="", validation_alias=AliasChoices("BENCHWARMERS_REQUIRE_KEYS"))
    public_url: str = Field(default="", validation_alias=AliasChoices("BENCHWARMERS_PUBLIC_URL"))
    allowed_hosts: str = ""  # comma-separated `host[:port]` beyond loopback (SEC-2)
    allowed_origins: str = ""  # comma-separated origins beyond the allowed hosts' (SEC-2, SEC-5)
    scheduler: str = "off"  # the prober's BENCH_SCHEDULER, reported by /api/status


class SeaterSettings(BusSettings):
    # RM-3: how route mode orders a new conversation's members: `leader` (the best recent record first, a
    # few starts for challengers; chosen by the study in docs/selection.md), `sampling` (Thompson sampling
    # over recent verdicts) or `verdicts` (useful verdicts overall, as written).
    route_ranking: Literal["leader", "sampling", "verdicts"] = "leader"


class CallerSettings(BusSettings):
    concurrency: int = 512
    # A caller holding a seat says so this often; a seat whose caller went silent for ack_wait is redelivered.
    heartbeat_s: float = 3.0
    ack_wait_s: float = 10.0
    max_connections: int = 1024
    # Provider keys mounted as files (a Kubernetes Secret directory, or one .env/JSON file); env wins.
    secrets_path: Path | None = None
    # U-5: BENCH_ALLOW_PAID=1 lets this caller call models the free-tier guard would hold.
    allow_paid: bool = False


class LedgerSettings(BusSettings):
    db_path: Path | None = None
    # The most events one fold transaction takes (catching up, or after lingering). Each transaction has a
    # fixed cost (a commit, one merge per table): at 5,000 the fold made 15,000 events/s, at 20,000 about
    # 20,000 (`benchmarks.ledger`, 300k seats).
    batch_max: int = 20_000
    # How long the fold gathers events into one transaction while nobody waits on it.
    linger_s: float = 5.0
    # DuckDB's worker threads (BENCH_DUCKDB_THREADS): one keeps the fold off the request path's cores;
    # raise it for heavy analytics on a big machine.
    duckdb_threads: int = 1
    # DuckDB's memory cap (BENCH_DUCKDB_MEMORY_LIMIT, DuckDB's own syntax: "192MB", "1GB", "10%"): what the
    # ledger's buffer pool settles at, since DuckDB keeps the blocks it touched until the cap. Above the
    # checkpoint threshold plus a batch's stage (services/ledger/store.py says what was measured).
    duckdb_memory_limit: str = "192MB"
    # How much WAL DuckDB gathers before it checkpoints (BENCH_DUCKDB_CHECKPOINT_THRESHOLD): what is not yet
    # checkpointed is held in memory, and more of it means fewer rewrites of the key indexes on a big ledger
    # (services/ledger/store.py says what was measured).
    duckdb_checkpoint_threshold: str = "64MB"
    # Ready (the ops port's /readyz) only while at most this many events behind the stream.
    ready_lag: int = Field(default=10_000, ge=0)

    def database(self) -> Path:
        return self.db_path or (self.home / "ledger.duckdb")


class ProberSettings(BusSettings):
    scheduler: str = "off"  # until a `scheduler_saved` config event says otherwise
    # HL-7: a job's claim in `bench_jobs` lapses this long after its holder's last renewal (renewed every
    # quarter of it), and a lapsed claim is taken over by another replica.
    job_lease_s: float = 120.0
    # CAT-2: where the catalog's public feeds are read (no key is ever sent), the most bytes one may be and
    # how long one fetch may take; a feed past either keeps its previous entries and records the error.
    catalog_openrouter_url: str = "https://openrouter.ai/api/v1/models"
    catalog_models_dev_url: str = "https://models.dev/api.json"
    catalog_freellmapi_url: str = "https://api.freellmapi.co/v1/latest"
    catalog_max_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)
    catalog_timeout_s: float = Field(default=60.0, gt=0)
    # O-3: the onboarding item being run is leased like a job (renewed every third of it); a prober that
    # dies mid-step leaves it to another replica once the lease lapses. Replicas look for work every tick.
    onboard_lease_s: float = 60.0
    onboard_tick_s: float = 1.0
