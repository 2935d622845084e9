"""How each real agent CLI is run once, non-interactively, against a base URL: its command line, its
environment and the config files it reads, all inside a temporary folder (its own HOME), with no key of this
machine's.

Measured with the pinned versions (package.json): Claude Code speaks Anthropic Messages to
`<base>/v1/messages?beta=true` (after a `HEAD <base>/`), Codex speaks Responses to `<base>/v1/responses`,
opencode speaks OpenAI chat to `<base>/v1/chat/completions` (after a tool-less title request).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from tests.agents.install import binary

ROUTE_MODEL = "bench/agents:route"


@dataclass(frozen=True)
class Run:
    """One agent invocation: what to execute, where, with what environment."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path


def base_env(home: Path) -> dict[str, str]:
    """A clean environment: PATH (for node and the shell tools), a temporary HOME and XDG folders, nothing
    else from this machine (no provider key can reach an agent)."""
    node = shutil.which("node")
    paths = [str(Path(node).parent)] if node else []
    paths += ["/usr/local/bin", "/usr/bin", "/bin"]
    for sub in (".config", ".cache", ".local/share", ".local/state"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.pathsep.join(dict.fromkeys(paths)), "HOME": str(home), "TMPDIR": str(home / "tmp"),
        "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local/share"), "XDG_STATE_HOME": str(home / ".local/state"),
        "LANG": "C.UTF-8", "TERM": "dumb", "NO_COLOR": "1", "SHELL": "/bin/bash",
    }


def prepare(folder: Path) -> tuple[Path, Path, dict[str, str]]:
    """The agent's HOME, its working folder (the project it works in) and its base environment."""
    home, work = folder / "home", folder / "work"
    work.mkdir(parents=True, exist_ok=True)
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return home, work, base_env(home)


def executable(name: str) -> str:
    path = binary(name)
    assert path is not None, f"{name} is not installed"
    return str(path)


def claude_code(gateway: str, folder: Path, task: str) -> Run:
    """`claude -p` with its default configuration: Anthropic Messages at ANTHROPIC_BASE_URL (the gateway's
    root, no /v1), the model and a key; Bash allowed, no updates or other background traffic."""
    _, work, env = prepare(folder)
    env.update({
        "ANTHROPIC_BASE_URL": gateway, "ANTHROPIC_API_KEY": "dummy", "ANTHROPIC_MODEL": ROUTE_MODEL,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
    })
    return Run([executable("claude"), "-p", task, "--allowedTools", "Bash"], env, work)


def codex_config(gateway: str, explicit: bool = False) -> str:
    """A model provider at the gateway (its base URL, the model and where the key is): Codex's default
    configuration, or with README's explicit settings (the wire API named, hosted web search and the
    multi-agent tools off: no longer needed, still served). The harness adds no approvals, no sandbox (the
    test's temporary folder is its whole world) and no analytics (which would hold the exit back offline)."""
    return "\n".join([
        f'model = "{ROUTE_MODEL}"',
        'model_provider = "bench"',
        'approval_policy = "never"',
        'sandbox_mode = "danger-full-access"',
        *(['web_search = "disabled"'] if explicit else []),
        "",
        "[model_providers.bench]",
        'name = "Benchwarmers"',
        f'base_url = "{gateway}/v1"',
        'env_key = "BENCH_AGENT_KEY"',
        *(['wire_api = "responses"', "", "[features]", "multi_agent = false"] if explicit else []),
        "",
        "[analytics]",
        "enabled = false",
        "",
    ])


def codex(gateway: str, folder: Path, task: str, explicit: bool = False) -> Run:
    """`codex exec` with a config.toml in a temporary CODEX_HOME."""
    home, work, env = prepare(folder)
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(codex_config(gateway, explicit))
    env.update({"CODEX_HOME": str(codex_home), "BENCH_AGENT_KEY": "dummy"})
    return Run([executable("codex"), "exec", "--skip-git-repo-check", task], env, work)


def codex_explicit(gateway: str, folder: Path, task: str) -> Run:
    return codex(gateway, folder, task, explicit=True)


def opencode_config(gateway: str) -> dict[str, object]:
    """An OpenAI-compatible provider at the gateway (its base URL and a key) and the model; the harness
    turns off updates and sharing."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"bench": {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": f"{gateway}/v1", "apiKey": "dummy"},
            "models": {ROUTE_MODEL: {}},
        }},
        "model": f"bench/{ROUTE_MODEL}",
        "autoupdate": False,
        "share": "disabled",
    }


def opencode(gateway: str, folder: Path, task: str) -> Run:
    """`opencode run` with an OpenAI-compatible provider at the gateway; no model catalogue fetch, no update
    check, no default plugins, no registry."""
    home, work, env = prepare(folder)
    config = home / "opencode.json"
    config.write_text(json.dumps(opencode_config(gateway), indent=2))
    env.update({
        "OPENCODE_CONFIG": str(config), "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    })
    # At start it installs a plugin package into its config folder from the npm registry; a dead registry
    # keeps the run offline, and it carries on without it.
    env["npm_config_registry"] = "http://127.0.0.1:9/"
    return Run([executable("opencode"), "run", task], env, work)


Recipe = Callable[[str, Path, str], Run]  # (gateway URL, folder, task) → the run
# Each agent with its default configuration.
AGENTS: dict[str, Recipe] = {"claude": claude_code, "codex": codex, "opencode": opencode}


@dataclass(frozen=True)
class Finished:
    returncode: int | None  # None: killed at the deadline
    stdout: str
    stderr: str
    leftovers: list[str]  # processes of the agent still running after it exited (then ended by PID)


def execute(run: Run, timeout: float) -> Finished:
    """Run the agent in a session of its own; at the deadline, or once it exits (or the test is interrupted),
    end every process it left (its process group, then any process still carrying its HOME), each by PID.
    Its output goes to files, not pipes: a process it left behind may hold them open."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(run.argv, cwd=run.cwd, env=run.env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=err, start_new_session=True)
        code: int | None = None
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
        finally:
            if proc.poll() is None:  # the deadline, or the test was interrupted
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)
            left = end_leftovers(proc.pid, run.env["HOME"])
        out.seek(0)
        err.seek(0)
        return Finished(code, out.read().decode(errors="replace"), err.read().decode(errors="replace"), left)


def end_leftovers(group: int, home: str) -> list[str]:
    """Kill what an agent left running: its process group, and anything (even in a session of its own) whose
    environment still names the agent's temporary HOME. Returns them as `name (pid)`, once all are gone."""
    found: list[psutil.Process] = []
    for process in psutil.process_iter(["pid", "name"]):
        with contextlib.suppress(psutil.Error, OSError):
            if os.getpgid(process.pid) == group or process.environ().get("HOME") == home:
                process.kill()
                found.append(process)
    deadline = time.monotonic() + 10
    while any(alive(p) for p in found) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [f"{p.info['name']} ({p.pid})" for p in found]


def alive(process: psutil.Process) -> bool:
    """Still running; a killed orphan waiting for init to reap it (a zombie) is not."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
