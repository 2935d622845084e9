"""What makes deploy/ operable (issue 15): probes and scraping on every service's ops port, drain grace that
matches the code's, two of every stateless service, disruption budgets, network policies, Pod Security
"restricted" for every pod, config that rolls the pods, a policy checker (checkov) with every accepted
finding explained, a runtime-only image with a HEALTHCHECK, and the compose files against the compose schema.
Everything reads the manifests as `kubectl apply -k deploy/k8s` sends them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from packaging.requirements import Requirement

from shared import bus_access
from tests.integration.deploy.kustomized import GENERATED, ROOT, find, rendered

SERVICES = bus_access.SERVICES
WORKLOADS = ("Deployment", "StatefulSet")
OPS_PORT = 9090
MARGIN_S = 5  # at least this much between the code's drain and the kubelet's SIGKILL
# Pod Security "restricted" allows only these volume types.
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                      "projected", "secret"}


def workloads() -> list[dict[str, Any]]:
    return [d for d in rendered() if d["kind"] in WORKLOADS]


def workload(name: str) -> dict[str, Any]:
    [found] = [w for w in workloads() if w["metadata"]["name"] == name]
    return found


def pod(w: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = w["spec"]["template"]["spec"]
    return spec


def main_container(name: str) -> dict[str, Any]:
    [container] = pod(workload(name))["containers"]
    return dict(container)


def env_of(container: dict[str, Any]) -> dict[str, str]:
    """Plain values: envFrom ConfigMaps, then env `value`s."""
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        env.update(find(rendered(), "ConfigMap", source["configMapRef"]["name"])["data"])
    env.update({e["name"]: e["value"] for e in container.get("env", []) if "value" in e})
    return env


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expr in selector.get("matchExpressions", []):
        assert expr["operator"] == "In", expr
        if labels.get(expr["key"]) not in expr["values"]:
            return False
    return True


def pod_labels(name: str) -> dict[str, str]:
    labels: dict[str, str] = workload(name)["spec"]["template"]["metadata"]["labels"]
    return labels


# ---- probes and scraping on the ops port ---------------------------------------------------------------

@pytest.mark.parametrize("service", SERVICES)
def test_every_service_is_probed_and_scraped_on_its_ops_port(service: str) -> None:
    container = main_container(service)
    assert env_of(container)["BENCH_OPS_PORT"] == str(OPS_PORT)
    assert env_of(container)["BENCH_OPS_BIND"] == "0.0.0.0", "the kubelet calls the pod's address"
    assert {"name": "ops", "containerPort": OPS_PORT} in container["ports"]
    probes = (("startupProbe", "/healthz"), ("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"))
    for probe, path in probes:
        assert container[probe]["httpGet"] == {"path": path, "port": "ops"}, probe
        assert "exec" not in container[probe]
    annotations = workload(service)["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == str(OPS_PORT)
    assert annotations["prometheus.io/path"] == "/metrics"


def test_nats_is_probed_on_its_monitor_healthz() -> None:
    container = main_container("nats")
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        url = container[probe]["exec"]["command"][-1]
        assert url.startswith("http://127.0.0.1:8222/healthz"), url


# ---- drain, replicas, disruption budgets -------------------------------------------------------------------

def prestop_sleep(container: dict[str, Any]) -> int:
    command = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command")
    if not command:
        return 0
    assert command[0] == "sleep", command
    return int(command[1])


@pytest.mark.parametrize("service", SERVICES)
def test_the_grace_period_covers_the_preStop_and_the_code_s_drain(service: str) -> None:
    """Every service drains on SIGTERM for BENCH_DRAIN_S (set on each, not left to the code's default)."""
    container = main_container(service)
    drain = int(env_of(container)["BENCH_DRAIN_S"])
    grace = pod(workload(service))["terminationGracePeriodSeconds"]
    assert grace >= prestop_sleep(container) + drain + MARGIN_S, (grace, drain)


def test_the_gateway_leaves_its_endpoints_before_it_drains() -> None:
    assert prestop_sleep(main_container("gateway")) >= 3


def test_no_stateless_service_runs_alone() -> None:
    for service in ("gateway", "seater", "caller"):
        assert workload(service)["spec"]["replicas"] >= 2, service


def test_every_replicated_workload_has_a_budget_that_lets_one_go() -> None:
    budgets = [d for d in rendered() if d["kind"] == "PodDisruptionBudget"]
    for w in workloads():
        name, replicas = w["metadata"]["name"], w["spec"]["replicas"]
        mine = [b for b in budgets if selects(b["spec"]["selector"], pod_labels(name))]
        if replicas < 2:
            assert not mine, f"{name}: a budget on one replica only blocks node drains"
            continue
        [budget] = mine
        spec = budget["spec"]
        allowed = spec["maxUnavailable"] if "maxUnavailable" in spec else replicas - spec["minAvailable"]
        assert 1 <= allowed < replicas, (name, spec)


# ---- network policies --------------------------------------------------------------------------------------

def ingress_rules(name: str) -> list[dict[str, Any]]:
    policies = [d for d in rendered() if d["kind"] == "NetworkPolicy"]
    rules: list[dict[str, Any]] = []
    for policy in policies:
        spec = policy["spec"]
        if "Ingress" in spec["policyTypes"] and selects(spec["podSelector"], pod_labels(name)):
            rules += spec.get("ingress", [])
    return rules


def test_nothing_is_reachable_unless_a_policy_lets_it() -> None:
    [deny] = [d for d in rendered() if d["kind"] == "NetworkPolicy" and d["spec"]["podSelector"] == {}]
    assert deny["spec"]["policyTypes"] == ["Ingress"] and not deny["spec"].get("ingress")


@pytest.mark.parametrize("name", [*SERVICES, "nats"])
def test_only_the_gateway_takes_ingress_from_anywhere(name: str) -> None:
    open_ports = {p["port"] for rule in ingress_rules(name) if "from" not in rule for p in rule["ports"]}
    assert open_ports == ({8122} if name == "gateway" else set())
    for rule in ingress_rules(name):
        assert rule.get("ports"), f"{name}: a rule without ports opens every port"


@pytest.mark.parametrize("service", SERVICES)
def test_prometheus_reaches_the_ops_port_and_nothing_else(service: str) -> None:
    scrapers = [r for r in ingress_rules(service) if r.get("from") and
                any("namespaceSelector" in peer for peer in r["from"])]
    assert [p["port"] for r in scrapers for p in r["ports"]] == [OPS_PORT]
    [peer] = scrapers[0]["from"]
    assert peer["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "prometheus"}


# ---- Pod Security "restricted", config rolls the pods ------------------------------------------------------

def test_the_namespace_enforces_pod_security_restricted() -> None:
    labels = find(rendered(), "Namespace", "benchwarmers")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


@pytest.mark.parametrize("name", [*SERVICES, "nats"])
def test_every_pod_meets_pod_security_restricted(name: str) -> None:
    spec = pod(workload(name))
    security = spec["securityContext"]
    assert security["runAsNonRoot"] is True and security["runAsUser"] >= 10000
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}
    assert spec["automountServiceAccountToken"] is False
    assert not {"hostNetwork", "hostPID", "hostIPC"} & spec.keys()
    for volume in spec.get("volumes", []):
        assert set(volume) - {"name"} <= RESTRICTED_VOLUMES, volume
    writable = {m["mountPath"] for c in spec["containers"] for m in c.get("volumeMounts", [])
                if not m.get("readOnly")}
    for container in [*spec.get("initContainers", []), *spec["containers"]]:
        context = container["securityContext"]
        assert context["allowPrivilegeEscalation"] is False
        assert context["readOnlyRootFilesystem"] is True
        assert context["capabilities"] == {"drop": ["ALL"]}
        assert "privileged" not in context and "runAsUser" not in context
    if name in SERVICES:
        assert "/tmp" in writable, "Python's temporary files need a writable /tmp"


def test_every_configmap_a_pod_reads_is_generated_so_a_change_rolls_it() -> None:
    for w in workloads():
        spec = pod(w)
        names = [v["configMap"]["name"] for v in spec.get("volumes", []) if "configMap" in v]
        for container in spec["containers"]:
            names += [s["configMapRef"]["name"] for s in container.get("envFrom", []) if "configMapRef" in s]
            names += [e["valueFrom"]["configMapKeyRef"]["name"] for e in container.get("env", [])
                      if "configMapKeyRef" in e.get("valueFrom", {})]
        assert names, w["metadata"]["name"]
        for name in names:
            assert GENERATED.match(name), f"{w['metadata']['name']} reads {name}, not a generated ConfigMap"
            find(rendered(), "ConfigMap", name)


# ---- the policy checker ------------------------------------------------------------------------------------

def checkov() -> str:
    """checkov lives in a venv of its own beside the project's (`make test` makes it from
    requirements-checkov.lock): it pins packaging<24, which the dev tools cannot share."""
    beside = Path(sys.prefix) / "checkov" / "bin" / "checkov"
    found = str(beside) if beside.exists() else shutil.which("checkov")
    assert found, f"checkov is missing: `make test` installs it in {beside.parent.parent}"
    return found


def test_checkov_finds_nothing_unexplained(tmp_path: Path) -> None:
    (tmp_path / "k8s.yaml").write_text(yaml.safe_dump_all(rendered(), sort_keys=False))
    shutil.copy(ROOT / "Dockerfile", tmp_path / "Dockerfile")
    done = subprocess.run([checkov(), "-d", str(tmp_path), "--framework", "kubernetes", "dockerfile",
                           "--compact", "--output", "json"], capture_output=True, text=True, timeout=240)
    loaded = json.loads(done.stdout)
    reports = {r["check_type"]: r for r in (loaded if isinstance(loaded, list) else [loaded])}
    assert set(reports) == {"kubernetes", "dockerfile"}, done.stdout[:2000]
    for kind, report in reports.items():
        summary = report["summary"]
        failed = [(f["check_id"], f["resource"]) for f in report["results"]["failed_checks"]]
        assert summary["failed"] == 0 and summary["parsing_errors"] == 0, (kind, failed)
        assert summary["passed"] > 0 and summary["resource_count"] > 0, summary
        for skipped in report["results"]["skipped_checks"]:
            reason = skipped["check_result"].get("suppress_comment") or ""
            assert len(reason) >= 40, f"{skipped['check_id']} skipped on {skipped['resource']} with no reason"
    assert reports["kubernetes"]["summary"]["resource_count"] >= len(workloads())


# ---- the image ---------------------------------------------------------------------------------------------

def lock_pins(path: Path) -> dict[str, tuple[str, set[str]]]:
    """{package: (version, what it is there for)} from a `uv pip compile` lock and its `# via` notes."""
    pins: dict[str, tuple[str, set[str]]] = {}
    current = ""
    for line in path.read_text().splitlines():
        if "==" in line and not line.startswith((" ", "#")):
            name, version = line.split("==", 1)
            current = normal(name.strip())
            pins[current] = (version.split(";")[0].strip(), set())
        elif current and line.strip().startswith("#"):
            reason = line.strip().lstrip("#").strip().removeprefix("via").strip()
            if reason and not reason.startswith("-c "):
                pins[current][1].add(normal(reason.split()[0]))
    return pins


def project() -> dict[str, Any]:
    loaded: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return loaded


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.lower())


def test_the_image_installs_the_runtime_lock_and_no_dev_tool() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    installs = re.findall(r"^RUN pip install (.+)$", dockerfile, re.MULTILINE)
    assert installs[0] == "-r requirements-runtime.lock", installs
    assert re.search(r"^RUN pip install --no-deps \.", dockerfile, re.MULTILINE)
    runtime, dev_lock = lock_pins(ROOT / "requirements-runtime.lock"), lock_pins(ROOT / "requirements.lock")
    for dependency in project()["dependencies"]:
        assert normal(Requirement(dependency).name) in runtime, dependency
    # A dev extra may be in the image only when a runtime package needs it (mcp needs cryptography, uvicorn
    # needs PyYAML): never for its own sake, as the test runner, the linters and the provider SDKs would be.
    for dependency in project()["optional-dependencies"]["dev"]:
        name = normal(Requirement(dependency).name)
        if name in runtime:
            assert runtime[name][1] & runtime.keys(), f"{name} is in the image for no runtime package"
    for name, (version, _) in runtime.items():
        assert dev_lock[name][0] == version, f"{name}: {version} in the image, {dev_lock[name][0]} in tests"


def test_the_image_checks_its_own_health_on_the_ops_port() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    [check] = re.findall(r"^HEALTHCHECK (.+?)(?<!\\)$", dockerfile, re.MULTILINE | re.DOTALL)
    assert "/healthz" in check and "BENCH_OPS_PORT" in check
    assert re.search(rf"^\s+BENCH_OPS_PORT={OPS_PORT}\b", dockerfile, re.MULTILINE)
    assert re.search(r"^USER 10001$", dockerfile, re.MULTILINE)


# ---- docker-compose.yml ------------------------------------------------------------------------------------

def compose_schema() -> dict[str, Any]:
    """The Compose Specification's JSON schema, as vendored by check-jsonschema (a dev dependency)."""
    vendored = resources.files("check_jsonschema.builtin_schemas.vendor")
    text = vendored.joinpath("compose-spec.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@pytest.mark.parametrize("name", ["docker-compose.yml", "deploy/compose.tls.yml"])
def test_the_compose_files_follow_the_compose_schema(name: str) -> None:
    schema = compose_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    document = yaml.safe_load((ROOT / name).read_text())
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]
    assert not errors, errors
    misspelt = {**document, "services": {"gateway": {"image": "x", "restart_policy": "always"}}}
    assert not validator.is_valid(misspelt), "the schema must refuse an unknown service key"


def test_compose_serves_its_network_name_and_drains_before_it_kills() -> None:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    hosts = services["gateway"]["environment"]["BENCH_ALLOWED_HOSTS"].split(",")
    assert "gateway" in hosts and "${GATEWAY_INGRESS_HOST:-}" in hosts
    for service in SERVICES:
        drain = int(services[service]["environment"]["BENCH_DRAIN_S"])
        assert int(services[service]["stop_grace_period"].rstrip("s")) >= drain + MARGIN_S, service
    assert services["seater"]["deploy"]["replicas"] >= 2
    for service in SERVICES:
        assert services[service]["environment"]["BENCH_OPS_PORT"] == str(OPS_PORT)
        assert services[service]["environment"]["BENCH_OPS_BIND"] == "0.0.0.0"
        assert services[service]["read_only"] is True and services[service]["cap_drop"] == ["ALL"]
