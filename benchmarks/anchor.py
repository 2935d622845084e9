"""The product this project implements (benchwarmers 0.3.3, the anchor), run beside it in one benchmark.

Issue 16 compares route turns and panels with the anchor measured side by side in one run; a figure from
another day says little on a machine whose speed moves by half. This module sets the anchor up as a user
would, with its own commands, against the same fake provider (an endpoint, the eight models onboarded with
`--quick`, the collection `core` with the same three members), then serves it with its gateway alone
(`gateway.py`, the request path; the dashboard's process with its scheduler is stopped once the set-up is
done). The anchor lives in a venv of its own (`make bench` installs `requirements-anchor.lock` there): it is
a distribution named `benchwarmers` too, so it cannot share this project's venv.

    python -m benchmarks.anchor           # route turns and panels through the anchor (about 2 minutes)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.floor import port_open, wait_for

ROOT = Path(__file__).parent.parent
PYTHON = ROOT / ".venv" / "anchor" / "bin" / "python"
NAME = "benchwarmers 0.3.3"
ENDPOINT = "fake"


def installed() -> bool:
    return PYTHON.exists()


def _package() -> Path:
    """Where the anchor's scripts are: its launcher runs each as `python <script>` from that folder."""
    out = subprocess.run([str(PYTHON), "-c", "import benchwarmers.launcher as l; print(l.ROOT)"],
                         check=True, capture_output=True, text=True)
    return Path(out.stdout.strip())


def _command(env: dict[str, str], *args: str) -> str:
    """One of the anchor's own commands (`bench ...`), run to its end; its output."""
    done = subprocess.run([str(PYTHON), "-m", "benchwarmers.launcher", *args], env=env, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)
    if done.returncode:
        said = f"{done.stdout[-800:]} {done.stderr[-800:]}"
        raise RuntimeError(f"the anchor's `bench {args[0]}` failed: {said}")
    return done.stdout


def _aliases(onboarded: dict[str, object]) -> list[str]:
    """The aliases `bench onboard --json` says it registered."""
    items = onboarded.get("items")
    if not isinstance(items, list):
        return []
    return [str(item.get("alias")) for item in items if isinstance(item, dict)]


@contextlib.contextmanager
def _server(script: Path, env: dict[str, str], port: int) -> Iterator[None]:
    """One of the anchor's servers, in a process group of its own (the dashboard's starts onboarding jobs),
    ended by that group's id, which is its PID."""
    proc = subprocess.Popen([str(PYTHON), str(script)], env=env, cwd=script.parent, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: port_open(port), f"the anchor's {script.name} on port {port}", timeout_s=30)
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


@contextlib.contextmanager
def anchor_path(provider_base: str, members: list[str], explorers: list[str]) -> Iterator[str]:
    """The anchor set up against `provider_base` (an OpenAI-compatible `/v1`) and serving; yields its base URL
    (`.../v1/chat/completions` answers `bench/core` and `bench/core:route`)."""
    from shared.natsserver import free_port

    package = _package()
    with tempfile.TemporaryDirectory(prefix="anchor-") as home:
        dashboard, gateway = free_port(), free_port()
        env = {**os.environ, "BENCHWARMERS_HOME": home, "BENCH_PORT": str(dashboard),
               "BENCH_GATEWAY_PORT": str(gateway), "BENCHWARMERS_URL": f"http://127.0.0.1:{dashboard}",
               f"BENCHWARMERS_KEY_{ENDPOINT.upper()}": "sk-anchor-bench", "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONUTF8": "1"}
        env.pop("PYTHONPATH", None)  # this project's packages are not the anchor's
        said = _command(env, "init", "--endpoint", ENDPOINT, provider_base, home)
        if f"Endpoint {ENDPOINT} added" not in said:
            raise RuntimeError(f"the anchor did not take the endpoint: {said[-600:]}")
        with _server(package / "serve.py", env, dashboard):
            # Its availability probe needs the `llm` CLI, which the anchor's request path does not: a model
            # the probe could not reach is registered all the same, and seated.
            listed = json.loads(_command(env, "onboard", "--json", "--endpoint", ENDPOINT, "--quick",
                                         "--wait", *members, *explorers))
            missing = set(members + explorers) - set(_aliases(listed))
            if missing:
                said = json.dumps(listed)[:800]
                raise RuntimeError(f"the anchor did not register {sorted(missing)}: {said}")
            _command(env, "collection", "save", "core", "--members", ",".join(members),
                     "--description", "benchmark panel")
        with _server(package / "gateway.py", env, gateway):
            yield f"http://127.0.0.1:{gateway}"


def route_through(url: str, direct_url: str, samples: int, seconds: float) -> dict[str, Any]:
    """Route turns through the anchor at `url` (its `/v1/chat/completions`), streamed, at 1 and 32 concurrent
    conversations, each against the provider's own stream just before it."""
    from benchmarks.panel import ROUTE_BODY, STREAM_BODY, load, summary

    out = {}
    for c in (1, 32):
        turns = samples if c == 1 else 10**9
        out[f"c{c}"] = {"direct": summary(load(direct_url, STREAM_BODY, c, seconds, turns, "data:")),
                        "anchor": summary(load(url, ROUTE_BODY, c, seconds, turns, "data:"))}
    return out


def anchor_runs(direct_url: str, samples: int, seconds: float) -> dict[str, Any]:
    """Route turns (c=1, c=32) and panels (c=1, c=32, c=128) through the anchor, set up for them: a panel at
    c=1 against its five calls sent straight to the provider at once, as this project's panel overhead is
    measured."""
    from benchmarks.panel import BODY, DIRECT_BODY, EXPLORERS, MEMBERS, SEATS, load, summary

    base = direct_url.removesuffix("/chat/completions")
    with anchor_path(base, MEMBERS, EXPLORERS) as url:
        url += "/v1/chat/completions"
        warm(url)
        load(url, BODY, 2, 3.0, 8)
        route = route_through(url, direct_url, samples, seconds)
        panels = {"c1": {"fanout": summary(load(direct_url, DIRECT_BODY, 1, 600, samples, fanout=SEATS)),
                         "anchor": summary(load(url, BODY, 1, 600, samples))},
                  "c32": {"anchor": summary(load(url, BODY, 32, seconds))},
                  "c128": {"anchor": summary(load(url, BODY, 128, seconds))}}
    return {"name": NAME, "route": route, "panel": panels}


def warm(url: str) -> None:
    """A few route turns first: connections made, the load workers' conversations opened."""
    from benchmarks.panel import ROUTE_BODY, load

    load(url, ROUTE_BODY, 2, 3.0, 8, "data:")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=60, help="requests in each concurrency-1 run")
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each run at c=32 and c=128")
    args = parser.parse_args()
    from benchmarks.panel import EXPLORERS, MEMBERS
    from tests.fakes.provider import FakeProvider

    if not installed():
        sys.exit(f"{NAME} is not installed in {PYTHON.parent.parent} (make bench installs it)")
    provider = FakeProvider(models={m: {"latency_ms": 200} for m in MEMBERS + EXPLORERS}).start()
    try:
        runs = anchor_runs(provider.base_url + "/chat/completions", args.samples, args.seconds)
    finally:
        provider.stop()
    print(json.dumps(runs, indent=2))


if __name__ == "__main__":
    main()
