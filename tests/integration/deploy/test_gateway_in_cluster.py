"""A gateway started with the environment deploy/k8s gives its pods answers requests sent to its Service's
names and to the ingress host set the way the README says, and refuses other Hosts (issue 15, item 1).
The environment is read out of the rendered manifests (the kubelet's $(NAME) expansion included); only what
must differ on this machine is replaced: where NATS and the seed are, the ports, the replicas of one server,
the admin token."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.gateway.allow import Allowed, startup_problems
from shared import processes
from shared.natsserver import NatsServer, free_port
from shared.settings import GatewaySettings
from tests.integration.deploy.kustomized import K8S, container_env, find, render, rendered
from tests.integration.service_process import ROOT, bus_env
from tests.integration.shared.certs import server_tls

TOKEN = "deploy-test-admin-token-0123456789"
SECRETS = {("benchwarmers-admin", "token"): TOKEN}
INGRESS = "bench.example.com"


def gateway_env(docs: list[dict[str, Any]]) -> dict[str, str]:
    return container_env(docs, find(docs, "Deployment", "gateway"), "gateway", SECRETS)


def gateway_command() -> list[str]:
    """The gateway container's command as the manifests give it, on this machine's interpreter."""
    workload = find(rendered(), "Deployment", "gateway")
    [spec] = [c for c in workload["spec"]["template"]["spec"]["containers"] if c["name"] == "gateway"]
    command: list[str] = spec["command"]
    assert command[0] == "python"
    return [sys.executable, *command[1:]]


def on_this_machine(env: dict[str, str], nats: NatsServer) -> dict[str, str]:
    """The manifests' environment with this machine's NATS (one server: one copy of each stream), seed folder
    and free ports."""
    return {**env, **bus_env(nats), "BENCH_REPLICAS": "1", "BENCH_PORT": str(free_port()),
            "BENCH_OPS_PORT": str(free_port())}


@contextlib.contextmanager
def gateway_process(env: dict[str, str], home: Path) -> Iterator[str]:
    """The manifests' gateway command with `env`, until it logged gateway_ready; its base URL on loopback."""
    log = home / "gateway.log"
    proc = processes.spawn(gateway_command(), log, cwd=ROOT,
                           env={**os.environ, "BENCHWARMERS_HOME": str(home), **env})
    try:
        ready = processes.wait_ready(proc, lambda: "gateway_ready" in log.read_text(errors="replace"), 60)
        assert ready, log.read_text(errors="replace")[-3000:]
        yield f"http://127.0.0.1:{env['BENCH_PORT']}"
    finally:
        processes.stop(proc)


@pytest.fixture
def tls_nats(tmp_path: Path) -> Iterator[NatsServer]:
    server = NatsServer(store=tmp_path / "nats", tls=server_tls(tmp_path / "tls")).start()
    try:
        yield server
    finally:
        server.stop()


def with_ingress_host(tmp_path: Path) -> list[dict[str, Any]]:
    """What README.md tells an operator to do: an overlay that sets the one ingress-host value."""
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        f"resources:\n  - {os.path.relpath(K8S, overlay)}\n"
        "configMapGenerator:\n  - name: gateway-hosts\n    behavior: merge\n"
        f"    literals:\n      - ingress-host={INGRESS}\n"
    )
    return render(overlay)


def test_the_gateway_answers_its_service_names_and_the_ingress_host(
        tmp_path: Path, tls_nats: NatsServer) -> None:
    env = on_this_machine(gateway_env(with_ingress_host(tmp_path)), tls_nats)
    assert env["BENCH_BIND"] == "0.0.0.0" and env["NATS_URL"].startswith("tls://")
    with gateway_process(env, tmp_path) as base:
        port = env["BENCH_PORT"]
        admin = {"authorization": f"Bearer {TOKEN}"}
        url = f"{base}/api/status"
        for host in ("gateway", "gateway.benchwarmers", "gateway.benchwarmers.svc",
                     "gateway.benchwarmers.svc.cluster.local"):
            reply = httpx.get(url, headers={**admin, "host": f"{host}:{port}"}, timeout=30)
            assert reply.status_code == 200, (host, reply.text)
        for host in (INGRESS, f"{INGRESS}:{port}"):
            assert httpx.get(url, headers={**admin, "host": host}, timeout=30).status_code == 200, host
        for host in ("evil.example", f"gateway.other-namespace.svc:{port}", f"bench.example.org:{port}"):
            reply = httpx.get(url, headers={**admin, "host": host}, timeout=30)
            assert reply.status_code == 403, host
        # The kubelet's probes and Prometheus call the ops port by the pod's IP, with no token.
        ops = f"http://127.0.0.1:{env['BENCH_OPS_PORT']}"
        pod_ip = {"host": f"10.42.0.7:{env['BENCH_OPS_PORT']}"}
        for path in ("/healthz", "/readyz", "/metrics"):
            assert httpx.get(ops + path, headers=pod_ip, timeout=30).status_code == 200, path


def test_without_an_ingress_host_the_service_names_are_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifests as shipped (no ingress host set): the same settings the process above reads."""
    for name, value in gateway_env(rendered()).items():
        monkeypatch.setenv(name, value)
    settings = GatewaySettings()
    assert startup_problems(settings) == []
    allowed = Allowed.from_settings(settings)
    for host in ("gateway", "gateway.benchwarmers", "gateway.benchwarmers.svc",
                 "gateway.benchwarmers.svc.cluster.local"):
        assert allowed.host_ok(f"{host}:8122") and allowed.host_ok(host), host
    assert not allowed.host_ok(INGRESS) and not allowed.host_ok("")


def test_a_missing_hosts_setting_stops_the_gateway_with_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BENCH", "NATS_"))}
    env.update(gateway_env(rendered()))
    env.pop("BENCH_ALLOWED_HOSTS")
    env.update({"BENCH_PORT": str(free_port()), "NATS_URL": "nats://127.0.0.1:1",
                "BENCHWARMERS_HOME": str(tmp_path)})
    done = subprocess.run(gateway_command(), env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "BENCH_ALLOWED_HOSTS" in lines[0], done.stderr
