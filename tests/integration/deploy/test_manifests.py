"""The deployment files keep the bus closed: docker-compose.yml and deploy/k8s give each service its own NATS
seed and nothing more, NATS reads its authorization from a mounted file, speaks TLS on Kubernetes and keeps
monitoring on loopback. The Kubernetes checks read what `kubectl apply -k` sends (rendered by a real
kustomize), checked against the Kubernetes schemas (kubernetes-validate), and the NATS configs are run by a
real nats-server laid out as the containers mount them."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import re
import shutil
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import nats
import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from shared import bus_access
from shared.natsserver import free_port, nats_server_binary
from tests.integration.deploy.kustomized import GENERATED, K8S, ROOT, find, rendered

COMPOSE = ROOT / "docker-compose.yml"
COMPOSE_TLS = ROOT / "deploy" / "compose.tls.yml"
BUS = "deploy/bus"  # where `bench bus credentials --out` writes, git- and docker-ignored

SERVICES = bus_access.SERVICES
UNMOUNTED = tuple(role for role in bus_access.ROLES if role not in SERVICES)  # supervisor, admin
WORKLOAD_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod"}
SEED = re.compile(r"\bSU[A-Z2-7]{56}\b")  # an nkey user seed, as `bench bus credentials` writes one
# The names the README tells the certificate to carry: what the services dial, and the routes' pod names.
CERT_NAMES = ("nats", "nats.benchwarmers.svc", "nats.benchwarmers.svc.cluster.local",
              "*.nats", "*.nats.benchwarmers.svc", "*.nats.benchwarmers.svc.cluster.local")


# ---- reading the files -----------------------------------------------------------------------------------

def k8s_files() -> list[Path]:
    return sorted(p for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")


def file_docs() -> list[dict[str, Any]]:
    """The resources as written in deploy/k8s/*.yaml, before kustomize."""
    docs: list[dict[str, Any]] = []
    for path in k8s_files():
        docs += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    return docs


def k8s_docs() -> list[dict[str, Any]]:
    """What `kubectl apply -k deploy/k8s` applies."""
    return rendered()


def one(kind: str, name: str) -> dict[str, Any]:
    """A resource by name (a generated ConfigMap by its name before the hash)."""
    return find(k8s_docs(), kind, name)


def unhashed(name: str) -> str:
    match = GENERATED.match(name)
    return match["base"] if match else name


def workloads() -> list[dict[str, Any]]:
    return [d for d in k8s_docs() if d["kind"] in WORKLOAD_KINDS]


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    if workload["kind"] == "Pod":
        return dict(workload["spec"])
    if workload["kind"] == "CronJob":
        return dict(workload["spec"]["jobTemplate"]["spec"]["template"]["spec"])
    return dict(workload["spec"]["template"]["spec"])


def containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*spec.get("initContainers", []), *spec.get("containers", [])]


def secret_refs(spec: dict[str, Any]) -> set[str]:
    """Every Secret a pod can read: volumes (plain and projected), env and envFrom."""
    names: set[str] = set()
    for volume in spec.get("volumes", []):
        if "secret" in volume:
            names.add(volume["secret"]["secretName"])
        for source in volume.get("projected", {}).get("sources", []):
            if "secret" in source:
                names.add(source["secret"]["name"])
    for container in containers(spec):
        for env in container.get("env", []):
            ref = env.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                names.add(ref["name"])
        for env_from in container.get("envFrom", []):
            if "secretRef" in env_from:
                names.add(env_from["secretRef"]["name"])
    return names


def secret_volumes(spec: dict[str, Any], secret: str) -> list[dict[str, Any]]:
    return [v for v in spec.get("volumes", []) if v.get("secret", {}).get("secretName") == secret]


def mount_of(spec: dict[str, Any], volume: str) -> dict[str, Any]:
    mounts = [m for c in containers(spec) for m in c.get("volumeMounts", []) if m["name"] == volume]
    assert len(mounts) == 1, f"volume {volume} is mounted {len(mounts)} times"
    return mounts[0]


def env_config() -> dict[str, str]:
    return dict(one("ConfigMap", "benchwarmers-env")["data"])


def nats_conf() -> str:
    return str(one("ConfigMap", "nats-config")["data"]["nats.conf"])


def compose(path: Path = COMPOSE) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text())  # resolves the x-service anchor and << merges
    return loaded


def compose_secret_targets(service: dict[str, Any]) -> dict[str, str]:
    """source -> path in the container (Compose's default target is /run/secrets/<source>)."""
    targets: dict[str, str] = {}
    for item in service.get("secrets", []):
        source, target = (item, item) if isinstance(item, str) else (item["source"], item.get("target", ""))
        targets[source] = target if target.startswith("/") else f"/run/secrets/{target or source}"
    return targets


# ---- Kubernetes: well-formed ------------------------------------------------------------------------------

def kustomization() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    return loaded


def test_every_manifest_parses_and_the_kustomization_lists_exactly_them() -> None:
    listed = sorted(kustomization()["resources"])
    assert listed == sorted(p.name for p in k8s_files())
    for doc in file_docs():
        assert {"apiVersion", "kind", "metadata"} <= doc.keys(), doc
    for generator in kustomization()["configMapGenerator"]:
        for name in [*generator.get("envs", []), *generator.get("files", [])]:
            assert (K8S / name).is_file(), name


@pytest.mark.parametrize("source", ["files", "kustomize"])
def test_manifests_validate_against_the_kubernetes_schemas(source: str) -> None:
    import kubernetes_validate

    version = kubernetes_validate.latest_version()
    for doc in file_docs() if source == "files" else k8s_docs():
        # strict: an unknown or misspelt field is an error, not silently dropped by the API server
        kubernetes_validate.validate(doc, version, strict=True)


def test_kustomize_renders_every_resource_into_the_namespace() -> None:
    generated = [d for d in k8s_docs() if d["kind"] == "ConfigMap"]
    assert len(k8s_docs()) == len(file_docs()) + len(generated)
    assert sorted(unhashed(d["metadata"]["name"]) for d in generated) == sorted(
        g["name"] for g in kustomization()["configMapGenerator"])
    for doc in k8s_docs():
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == "benchwarmers", doc["metadata"]
        assert doc["metadata"]["labels"]["app.kubernetes.io/part-of"] == "benchwarmers"


# ---- Kubernetes: who holds which secret ------------------------------------------------------------------

def test_no_secret_is_kept_in_the_repository() -> None:
    assert not [d for d in k8s_docs() if d["kind"] == "Secret"], "Secrets are created by hand (README.md)"
    bus = ROOT / BUS
    for path in [COMPOSE, *(ROOT / "deploy").rglob("*")]:
        if path.is_file() and bus not in path.parents:
            text = path.read_text(errors="replace")
            assert not SEED.search(text), f"{path} holds an nkey seed"
            assert "PRIVATE KEY-----" not in text, f"{path} holds a private key"
    for name, value in env_config().items():
        assert not SEED.search(value), f"ConfigMap entry {name} holds a seed"


def test_every_service_has_one_workload() -> None:
    names = sorted(w["metadata"]["name"] for w in workloads())
    assert names == sorted([*SERVICES, "nats"])


@pytest.mark.parametrize("role", SERVICES)
def test_a_service_mounts_its_own_seed_and_no_other_role_s(role: str) -> None:
    [workload] = [w for w in workloads() if w["metadata"]["name"] == role]
    spec = pod_spec(workload)
    bus_secrets = {name for name in secret_refs(spec) if name.startswith("bench-bus-")}
    assert bus_secrets == {f"bench-bus-{role}"}

    [volume] = secret_volumes(spec, f"bench-bus-{role}")
    assert volume["secret"]["items"] == [{"key": f"{role}.nk", "path": f"{role}.nk"}]
    # nobody else in the pod reads it: not world-readable, and the pod's user reads it through fsGroup
    mode = volume["secret"]["defaultMode"]
    assert mode & 0o007 == 0, oct(mode)
    security = spec["securityContext"]
    assert security["runAsNonRoot"] is True
    assert mode & 0o040 and security.get("fsGroup") == security["runAsUser"] == 10001
    mount = mount_of(spec, volume["name"])
    assert mount["readOnly"] is True
    assert mount["mountPath"] == env_config()["BENCH_NATS_CREDENTIALS"]
    assert "subPath" not in mount  # a subPath mount never sees an updated Secret

    # the CA, and only the CA, from the NATS TLS Secret
    [ca] = secret_volumes(spec, "bench-nats-tls")
    assert ca["secret"]["items"] == [{"key": "ca.crt", "path": "ca.crt"}]
    ca_mount = mount_of(spec, ca["name"])
    assert ca_mount["readOnly"] is True
    assert str(PurePosixPath(ca_mount["mountPath"]) / "ca.crt") == env_config()["BENCH_NATS_TLS_CA"]

    for container in containers(spec):
        assert all(e.get("name") != "BENCH_NATS_CREDENTIALS" for e in container.get("env", [])), \
            "the ConfigMap says where the seed is; a per-container override would hide a wrong mount"
    assert spec.get("automountServiceAccountToken") is False


def test_no_workload_mounts_the_admin_or_supervisor_seed() -> None:
    for workload in workloads():
        spec = pod_spec(workload)
        for role in UNMOUNTED:
            assert f"bench-bus-{role}" not in secret_refs(spec), workload["metadata"]["name"]
            items = [i["key"] for v in spec.get("volumes", []) for i in v.get("secret", {}).get("items", [])]
            assert f"{role}.nk" not in items, workload["metadata"]["name"]
    nats_spec = pod_spec(one("StatefulSet", "nats"))
    assert not {n for n in secret_refs(nats_spec) if n.startswith("bench-bus-")}, "NATS holds no seed"


def test_the_services_dial_nats_over_tls_with_their_credentials_folder() -> None:
    env = env_config()
    assert env["NATS_URL"].startswith("tls://")
    assert env["BENCH_NATS_TLS_CA"] == "/etc/bench/tls/ca.crt"
    assert env["BENCH_NATS_CREDENTIALS"] == "/etc/bench/bus"


# ---- Kubernetes: the NATS server -------------------------------------------------------------------------

def nats_paths() -> dict[str, str]:
    """volume -> mountPath in the NATS container."""
    [container] = pod_spec(one("StatefulSet", "nats"))["containers"]
    return {m["name"]: m["mountPath"] for m in container["volumeMounts"]}


def test_nats_includes_its_authorization_from_the_auth_secret() -> None:
    spec = pod_spec(one("StatefulSet", "nats"))
    [container] = spec["containers"]
    config_file = PurePosixPath(container["args"][container["args"].index("--config") + 1])
    config_volume = next(v for v in spec["volumes"]
                         if unhashed(v.get("configMap", {}).get("name", "")) == "nats-config")
    assert config_file == PurePosixPath(nats_paths()[config_volume["name"]]) / "nats.conf"

    includes = re.findall(r"^\s*include\s+\"?([^\s\"]+)\"?\s*$", nats_conf(), re.MULTILINE)
    assert len(includes) == 1, includes
    # nats-server joins an include onto the including file's folder, whatever it starts with
    resolved = PurePosixPath(re.sub(r"[^/]+/\.\./", "", f"{config_file.parent}/{includes[0]}"))
    [auth] = secret_volumes(spec, "bench-nats-auth")
    assert resolved == PurePosixPath(nats_paths()[auth["name"]]) / "auth.conf"
    assert "authorization" not in nats_conf(), "the users come from the Secret, nowhere else"
    assert "subPath" not in mount_of(spec, auth["name"])


def test_nats_speaks_tls_to_clients_and_routes_with_the_tls_secret() -> None:
    conf = nats_conf()
    tls_dir = nats_paths()[secret_volumes(pod_spec(one("StatefulSet", "nats")), "bench-nats-tls")[0]["name"]]
    blocks = re.findall(r"^(\s*)tls\s*\{(.*?)^\1\}", conf, re.MULTILINE | re.DOTALL)
    indents = sorted(indent for indent, _ in blocks)
    assert len(blocks) == 2 and indents[0] == "", "one tls block for clients (top level), one in cluster"
    for _, body in blocks:
        for key, name in (("cert_file", "tls.crt"), ("key_file", "tls.key"), ("ca_file", "ca.crt")):
            path = re.escape(f"{tls_dir}/{name}")
            assert re.search(rf"{key}:\s*{path}\s*$", body, re.MULTILINE), body
    cluster = conf[conf.index("cluster {"):]
    assert re.search(r"^\s+tls\s*\{", cluster, re.MULTILINE), "routes are TLS too"


def test_nats_monitoring_stays_on_loopback_and_probes_run_inside() -> None:
    assert re.search(r"^http:\s*127\.0\.0\.1:\d+\s*$", nats_conf(), re.MULTILINE)
    assert not re.search(r"^\s*(https?|http_port|monitor_port)\s*:\s*(0\.0\.0\.0:)?\d+\s*$", nats_conf(),
                         re.MULTILINE)
    [container] = pod_spec(one("StatefulSet", "nats"))["containers"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        command = container[probe]["exec"]["command"]
        assert "httpGet" not in container[probe]
        assert any(arg.startswith("http://127.0.0.1:8222/") for arg in command), command
    assert 8222 not in [p["containerPort"] for p in container["ports"]]
    assert 8222 not in [p["port"] for p in one("Service", "nats")["spec"]["ports"]]


def test_only_services_reach_the_client_port_and_only_nats_the_routes() -> None:
    policy = one("NetworkPolicy", "nats")["spec"]
    assert policy["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "nats"}}
    assert policy["policyTypes"] == ["Ingress"]
    allowed: dict[int, set[str]] = {}
    for rule in policy["ingress"]:
        peers: set[str] = set()
        for peer in rule["from"]:
            assert set(peer) == {"podSelector"}, "no namespace- or IP-wide peers"
            selector = peer["podSelector"]
            peers |= set(selector.get("matchLabels", {}).values())
            for expr in selector.get("matchExpressions", []):
                assert expr["key"] == "app.kubernetes.io/name" and expr["operator"] == "In"
                peers |= set(expr["values"])
        for port in rule["ports"]:
            allowed.setdefault(port["port"], set()).update(peers)
    assert allowed == {4222: set(SERVICES), 6222: {"nats"}}


# ---- docker-compose.yml ------------------------------------------------------------------------------------

def test_compose_gives_each_service_its_own_seed_only() -> None:
    spec = compose()
    services = spec["services"]
    assert set(services) == {"nats", *SERVICES}
    files = {name: secret["file"] for name, secret in spec["secrets"].items()}
    for role in SERVICES:
        service = services[role]
        targets = compose_secret_targets(service)
        assert len(targets) == 1, f"{role} gets {sorted(targets)}"
        [(source, target)] = targets.items()
        assert files[source] == f"{BUS}/{role}.nk"
        assert PurePosixPath(target) == PurePosixPath(service["environment"]["BENCH_NATS_CREDENTIALS"]) / \
            f"{role}.nk"
        assert service["environment"]["NATS_URL"] == "nats://nats:4222"
    for role in UNMOUNTED:
        assert not [f for f in files.values() if f.endswith(f"/{role}.nk")], f"{role}'s seed stays home"
    used = {s for service in services.values() for s in compose_secret_targets(service)}
    assert used == set(files), "every secret defined is used, every one used is defined"
    assert all(f.startswith(f"{BUS}/") for f in files.values())


def compose_nats_layout(spec: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The NATS container's config path and {path in container: file in the repo} for its mounted files."""
    nats_service = spec["services"]["nats"]
    command = nats_service["command"]
    config_path = command[command.index("--config") + 1]
    mounted: dict[str, str] = {}
    for item in nats_service.get("configs", []):
        mounted[item["target"]] = spec["configs"][item["source"]]["file"]
    for source, target in compose_secret_targets(nats_service).items():
        mounted[target] = spec["secrets"][source]["file"]
    return config_path, mounted


def test_compose_nats_reads_its_config_and_auth_conf_side_by_side() -> None:
    spec = compose()
    config_path, mounted = compose_nats_layout(spec)
    assert config_path in mounted
    conf = (ROOT / mounted[config_path]).read_text()
    [include] = re.findall(r"^\s*include\s+\"?([^\s\"]+)\"?\s*$", conf, re.MULTILINE)
    assert mounted[str(PurePosixPath(config_path).parent / include)] == f"{BUS}/auth.conf"
    assert re.search(r"^http:\s*127\.0\.0\.1:8222\s*$", conf, re.MULTILINE)
    nats_service = spec["services"]["nats"]
    assert "ports" not in nats_service, "NATS is reached on the Compose network only"
    assert "127.0.0.1:8222" in " ".join(nats_service["healthcheck"]["test"])


def test_the_compose_tls_override_adds_only_the_ca_to_the_services() -> None:
    override = compose(COMPOSE_TLS)
    files = {name: secret["file"] for name, secret in override["secrets"].items()}
    for role in SERVICES:
        service = override["services"][role]
        assert service["environment"]["NATS_URL"].startswith("tls://")
        targets = compose_secret_targets(service)
        assert [files[s] for s in targets] == [f"{BUS}/nats-ca.crt"]
        assert list(targets.values()) == [service["environment"]["BENCH_NATS_TLS_CA"]]
    assert all(f.startswith(f"{BUS}/") for f in files.values())


def test_the_credentials_folder_is_ignored_by_git_and_docker() -> None:
    assert f"{BUS}/" in (ROOT / ".gitignore").read_text().splitlines()
    assert BUS in (ROOT / ".dockerignore").read_text().splitlines()
    git = shutil.which("git")
    if git and (ROOT / ".git").exists():
        for name in ("gateway.nk", "auth.conf", "nats.key"):
            assert subprocess.run([git, "-C", str(ROOT), "check-ignore", "-q", f"{BUS}/{name}"],
                                  timeout=30).returncode == 0, name


# ---- a real nats-server reads these configs ---------------------------------------------------------------

def bench_credentials(out: Path) -> Path:
    """What the user runs: `bench bus credentials --out DIR`."""
    bench = Path(sys.executable).with_name("bench")
    subprocess.run([str(bench), "bus", "credentials", "--out", str(out)], check=True, capture_output=True,
                   timeout=60)
    return out


def substitute(text: str, replacements: dict[str, str]) -> str:
    for old, new in replacements.items():
        assert old in text, f"the config no longer has {old!r}: update this test's layout"
        text = text.replace(old, new)
    return text


def check_config(conf: Path, env: dict[str, str] | None = None) -> None:
    result = subprocess.run([nats_server_binary(), "-c", str(conf), "-t"], capture_output=True, text=True,
                            env=env, timeout=30)
    assert result.returncode == 0, result.stderr + result.stdout


def write_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA and a certificate signed by it with the names the README lists (and 127.0.0.1 for this test)."""
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "deploy test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(n) for n in CERT_NAMES]
    names.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "nats")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                  ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = folder / "tls.crt", folder / "tls.key", folder / "ca.crt"
    paths[0].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    paths[2].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return paths


@pytest.fixture
def running() -> Iterator[list[subprocess.Popen[bytes]]]:
    """nats-server processes a test starts; stopped by their PID afterwards."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def start(running: list[subprocess.Popen[bytes]], conf: Path, port: int,
          env: dict[str, str] | None = None) -> None:
    log = conf.with_suffix(".log")
    running.append(subprocess.Popen([nats_server_binary(), "-c", str(conf), "-l", str(log)], env=env))
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        assert running[-1].poll() is None, log.read_text() if log.exists() else "nats-server exited"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nats-server did not listen on {port}: {log.read_text()}")


def logs_in(url: str, seed: str, tls: ssl.SSLContext | None = None) -> bool:
    async def attempt() -> bool:
        try:
            nc = await nats.connect(url, nkeys_seed_str=seed, tls=tls, tls_hostname="nats" if tls else None,
                                    allow_reconnect=False, max_reconnect_attempts=0, connect_timeout=10)
        except Exception:
            return False
        await nc.flush(timeout=10)
        await nc.close()
        return True

    return asyncio.run(attempt())


def lay_out_compose_nats(tmp_path: Path, bus: Path, port: int) -> Path:
    """docker-compose.yml's NATS container under tmp_path: its config and auth.conf where Compose mounts them,
    and the TLS variant beside them; returns the config file."""
    root = tmp_path / "container"
    config_path, mounted = compose_nats_layout(compose())
    for target, source in mounted.items():
        path = root / target.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        from_bus = source.startswith(f"{BUS}/")
        text = (bus / Path(source).name).read_text() if from_bus else (ROOT / source).read_text()
        if target == config_path:
            text = substitute(text, {"listen: 0.0.0.0:4222": f"listen: 127.0.0.1:{port}",
                                     "http: 127.0.0.1:8222": f"http: 127.0.0.1:{free_port()}",
                                     "store_dir: /data": f"store_dir: {tmp_path / 'data'}"})
        path.write_text(text)

    # compose-tls.conf includes the mounted config and adds the certificates
    override = compose(COMPOSE_TLS)
    command = override["services"]["nats"]["command"]
    tls_config = command[command.index("--config") + 1]
    [item] = override["services"]["nats"]["configs"]
    assert item["target"] == tls_config
    cert, key, ca = write_certificates(tmp_path / "certs")
    files = {"nats.crt": cert, "nats.key": key, "nats-ca.crt": ca}
    text = (ROOT / override["configs"][item["source"]]["file"]).read_text()
    for source, target in compose_secret_targets(override["services"]["nats"]).items():
        text = substitute(text, {target: str(files[Path(override["secrets"][source]["file"]).name])})
    (root / tls_config.lstrip("/")).write_text(text)
    check_config(root / tls_config.lstrip("/"))
    return root / config_path.lstrip("/")


def test_the_compose_nats_config_runs_with_the_auth_conf_bench_makes(
        tmp_path: Path, running: list[subprocess.Popen[bytes]]) -> None:
    bus = bench_credentials(tmp_path / "bus")
    port = free_port()
    conf = lay_out_compose_nats(tmp_path, bus, port)
    check_config(conf)
    start(running, conf, port)
    url = f"nats://127.0.0.1:{port}"
    for role in SERVICES:
        assert logs_in(url, (bus / f"{role}.nk").read_text().strip()), role
    stranger = bench_credentials(tmp_path / "other-bus")
    assert not logs_in(url, (stranger / "gateway.nk").read_text().strip()), "an unknown key is refused"


def lay_out_kubernetes_nats(tmp_path: Path, bus: Path, ca_files: tuple[Path, Path, Path], port: int,
                            cluster: int) -> Path:
    """The NATS pod under tmp_path: each volume's files in its mount folder, as the kubelet puts them;
    returns the config file the container's args name."""
    cert, key, ca = ca_files
    spec = pod_spec(one("StatefulSet", "nats"))
    [container] = spec["containers"]
    root = str(tmp_path / "pod")
    contents: dict[str, dict[str, str]] = {
        "nats-config": {"nats.conf": nats_conf()},
        "bench-nats-auth": {"auth.conf": (bus / "auth.conf").read_text()},
        "bench-nats-tls": {"tls.crt": cert.read_text(), "tls.key": key.read_text(), "ca.crt": ca.read_text()},
    }
    for volume in spec["volumes"]:
        source = volume.get("configMap", {}).get("name") or volume.get("secret", {}).get("secretName") or ""
        source = unhashed(source)
        folder = Path(root + mount_of(spec, volume["name"])["mountPath"])
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in contents.get(source, {}).items():
            (folder / name).write_text(text)
    for claim in one("StatefulSet", "nats")["spec"]["volumeClaimTemplates"]:
        Path(root + mount_of(spec, claim["metadata"]["name"])["mountPath"]).mkdir(parents=True, exist_ok=True)

    conf = Path(root + container["args"][container["args"].index("--config") + 1])
    text = substitute(conf.read_text(), {
        "listen: 0.0.0.0:4222": f"listen: 127.0.0.1:{port}",
        "listen: 0.0.0.0:6222": f"listen: 127.0.0.1:{cluster}",
        "http: 127.0.0.1:8222": f"http: 127.0.0.1:{free_port()}",
        "/etc/nats/": f"{root}/etc/nats/", "/var/run/nats/": f"{root}/var/run/nats/",
        "store_dir: /data": f"store_dir: {root}/data",
    })
    # one server alone: its only route is itself (JetStream clustering needs one), on loopback
    text = re.sub(r"routes:\s*\[[^\]]*\]", f"routes: [ nats-route://127.0.0.1:{cluster} ]", text)
    conf.write_text(text)
    return conf


def test_the_kubernetes_nats_config_runs_over_tls_as_the_pod_mounts_it(
        tmp_path: Path, running: list[subprocess.Popen[bytes]]) -> None:
    bus = bench_credentials(tmp_path / "bus")
    cert, key, ca = write_certificates(tmp_path / "certs")
    port, cluster = free_port(), free_port()
    conf = lay_out_kubernetes_nats(tmp_path, bus, (cert, key, ca), port, cluster)
    env = {"POD_NAME": "nats-0", "CLUSTER_ADVERTISE": f"127.0.0.1:{cluster}", "PATH": "/usr/bin:/bin"}
    check_config(conf, env)
    start(running, conf, port, env)

    trusted = ssl.create_default_context(cafile=str(ca))
    url = f"tls://127.0.0.1:{port}"
    for role in SERVICES:
        assert logs_in(url, (bus / f"{role}.nk").read_text().strip(), trusted), role
    seed = (bus / "caller.nk").read_text().strip()
    assert not logs_in(url, seed, ssl.create_default_context()), "a client that does not trust the CA"
    assert not logs_in(f"nats://127.0.0.1:{port}", seed), "plain text"
