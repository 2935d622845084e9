"""Which hosts and origins may reach this gateway (SEC-2, SEC-5), and whether it may start at all (SEC-1).
Pure: functions of the settings and a request's headers.

The Host allow-list defeats DNS rebinding: a page on `evil.example` that resolves to 127.0.0.1 still sends
`Host: evil.example`. The Origin checks keep other pages from posting here from the user's browser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from shared.loopback import is_loopback_host
from shared.settings import GatewaySettings

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
EXPOSED = ("X-Bench-Panel, X-Bench-Seats, X-Bench-Conversation, X-Bench-Model, X-Bench-Dropped-Tools, "
           "X-Bench-Dropped-Items")
PLAIN_HEADER = re.compile(r"^[A-Za-z0-9-]{1,64}$")
# One BENCH_ALLOWED_HOSTS entry: a DNS name, an IPv4 address or a bracketed IPv6 one, with an optional port.
HOST_ENTRY = re.compile(r"^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*"
                        r"|\[[0-9a-f:.]+\])(?::(?P<port>\d{1,5}))?$")
MAX_REQUESTED_HEADERS = 32
TOKEN_MIN = 16


def split_list(text: str) -> list[str]:
    return [item.strip().lower() for item in text.split(",") if item.strip()]


def public_netloc(public_url: str) -> str:
    return urlsplit(public_url).netloc.lower() if public_url else ""


@dataclass(frozen=True)
class Allowed:
    hosts: frozenset[str]
    origins: frozenset[str]

    @classmethod
    def from_settings(cls, settings: GatewaySettings) -> Allowed:
        hosts = {f"{name}:{settings.port}" for name in LOOPBACK_NAMES}
        for entry in split_list(settings.allowed_hosts):
            hosts.add(entry)
            if not re.search(r":\d+$", entry):
                hosts.add(f"{entry}:{settings.port}")
        public = public_netloc(settings.public_url)
        if public:
            hosts.add(public)
        origins = {f"http://{host}" for host in hosts}
        origins.update(o.rstrip("/") for o in split_list(settings.allowed_origins))
        if public:
            origins.add(f"{urlsplit(settings.public_url).scheme.lower()}://{public}")
        return cls(frozenset(hosts), frozenset(origins))

    def host_ok(self, host: str | None) -> bool:
        """Case-insensitive; the port is required (a portless Host is refused)."""
        return host is not None and host.strip().lower() in self.hosts

    def origin_ok(self, origin: str | None) -> bool:
        return origin is not None and origin.strip().lower().rstrip("/") in self.origins


def preflight_headers(origin: str, requested: str | None) -> dict[str, str]:
    """SEC-5: the headers of a 204 preflight; the requested headers are echoed only when all are plain."""
    allow = ["Authorization", "Content-Type"]
    names = [n.strip() for n in (requested or "").split(",") if n.strip()]
    if names and len(names) <= MAX_REQUESTED_HEADERS and all(PLAIN_HEADER.match(n) for n in names):
        allow += [n for n in names if n.lower() not in ("authorization", "content-type")]
    return {
        **cors_headers(origin),
        "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
        "Access-Control-Allow-Headers": ", ".join(allow),
        "Access-Control-Max-Age": "600",
    }


def cors_headers(origin: str) -> dict[str, str]:
    """Echo the one allowed origin: never `*`, never credentials."""
    return {"Access-Control-Allow-Origin": origin, "Vary": "Origin", "Access-Control-Expose-Headers": EXPOSED}


def startup_problems(settings: GatewaySettings) -> list[str]:
    """SEC-1: reasons this gateway must not start, each naming what to set."""
    problems = []
    token = settings.admin_token.get_secret_value() if settings.admin_token else ""
    if not is_loopback_host(settings.bind) and not token:
        problems.append(f"BENCH_BIND={settings.bind} listens beyond this machine: set "
                        f"BENCHWARMERS_ADMIN_TOKEN ({TOKEN_MIN}+ characters) first, or bind 127.0.0.1")
    if token and len(token) < TOKEN_MIN:
        problems.append(f"BENCHWARMERS_ADMIN_TOKEN is {len(token)} characters; it must be at least "
                        f"{TOKEN_MIN}")
    problems += host_problems(settings)
    if settings.public_url:
        parts = urlsplit(settings.public_url)
        if (parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password
                or parts.path not in ("", "/") or parts.query or parts.fragment):
            problems.append("BENCHWARMERS_PUBLIC_URL must be http(s)://host[:port] with no user, path or "
                            f"query (got {settings.public_url!r})")
    return problems


def host_problems(settings: GatewaySettings) -> list[str]:
    """SEC-1/SEC-2: a malformed BENCH_ALLOWED_HOSTS entry, or a gateway bound beyond loopback that no
    non-loopback Host could reach (it would answer 403 to every request through a Service or an ingress)."""
    bad = [e for e in split_list(settings.allowed_hosts) if not entry_ok(e)]
    if bad:
        return [f"BENCH_ALLOWED_HOSTS has {', '.join(repr(e) for e in bad)}: give comma-separated "
                "host[:port] names (no scheme, path or wildcard), e.g. gateway,gateway.benchwarmers.svc"]
    reachable = split_list(settings.allowed_hosts) or settings.public_url
    if not is_loopback_host(settings.bind) and not reachable:
        return [f"BENCH_BIND={settings.bind} listens beyond this machine but only loopback Hosts are "
                "allowed: set BENCH_ALLOWED_HOSTS to the names clients use (Service DNS names, the ingress "
                "host) or BENCHWARMERS_PUBLIC_URL"]
    return []


def entry_ok(entry: str) -> bool:
    match = HOST_ENTRY.match(entry)
    return match is not None and (match["port"] is None or 0 < int(match["port"]) < 65536)
