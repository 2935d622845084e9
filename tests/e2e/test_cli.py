"""The real `bench` executable against a whole stack (SPEC CLI-1..CLI-4, A-78..A-80): exit codes, what goes
to stdout and what to stderr, piped stdin added to the words (K-11), confirmations, and every client
command answering. Models made here are ad hoc, so they never sit as explorers on other modules' panels."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.stack import Stack
from shared.natsserver import free_port
from tests.e2e.conftest import Admin, wait_until
from tests.fakes.provider import FakeProvider

BENCH = Path(sys.executable).with_name("bench")
CALL_RE = re.compile(r"p\d{8}-\d{6}-[0-9a-f]{4}\.member\d")


def bench(
    *args: str, url: str | None = None, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `bench` with no terminal: stdin is the given text, or nothing at all."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("BENCHWARMERS_")}
    if url:
        full["BENCHWARMERS_URL"] = url
    full.update(env or {})
    return subprocess.run(
        [str(BENCH), *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=full,
        timeout=120,
    )


@pytest.fixture(scope="module")
def url(stack: Stack, provider: FakeProvider) -> Iterator[str]:
    admin = Admin(stack.url)
    for served in ("cli-a", "cli-b", "cli-c"):
        admin.model(served, ad_hoc=True)
    provider.set_model("cli-slow", latency_ms=20_000)
    admin.model("cli-slow", ad_hoc=True)
    admin.collection("cli-pair", ["cli-a", "cli-b"], description="for the cli tests", tags=["cli"])
    admin.collection("cli-slow", ["cli-slow"])
    yield stack.url


def test_a78_no_server_exits_3_naming_the_url() -> None:
    nowhere = f"http://127.0.0.1:{free_port()}"
    done = bench("status", url=nowhere)
    assert done.returncode == 3
    assert nowhere in done.stderr and done.stdout == ""


def test_a78_nothing_to_ask_exits_2_and_an_unknown_call_exits_1(url: str) -> None:
    nothing = bench("ask", "cli-pair", url=url)
    assert nothing.returncode == 2 and "nothing to ask" in nothing.stderr
    unknown = bench("verdict", "p20200101-000000-0000.member1", "--useful", url=url)
    assert unknown.returncode == 1 and "p20200101-000000-0000.member1" in unknown.stderr
    assert bench("ask", "no-such-collection", "hi", url=url).returncode == 1
    assert bench("verdict", "x.member1", url=url).returncode == 2  # neither --useful nor --not-useful


def test_a79_answers_on_stdout_seats_on_stderr_and_piped_stdin_joins_the_words(
    url: str, provider: FakeProvider
) -> None:
    provider.reset_requests()
    done = bench("ask", "cli-pair", "review", "this:", url=url, stdin="the piped diff\n")
    assert done.returncode == 0, done.stderr
    assert "cli-a says: review this:" in done.stdout and "cli-b says:" in done.stdout
    calls = sorted(set(CALL_RE.findall(done.stderr)))
    assert len(calls) == 2 and all(call in done.stdout for call in calls)
    asked = [
        r["body"]["messages"][-1]["content"] for r in provider.requests() if r["body"]["model"] == "cli-a"
    ]
    assert asked and "review this:" in asked[-1] and "the piped diff" in asked[-1]
    assert bench("verdict", calls[0], "--useful", "--note", "fine", url=url).returncode == 0
    pending = bench("pending", *calls, url=url)
    assert pending.returncode == 0 and pending.stdout.split() == [calls[1]]


def test_a79_json_prints_the_raw_reply_and_url_goes_before_or_after(url: str, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("a file's words")
    for args in (
        ["--url", url, "ask", "cli-pair", "hi", "-f", str(notes), "--json"],
        ["ask", "--json", "cli-pair", "hi", "-f", str(notes), "--url", url],
    ):
        done = bench(*args)
        assert done.returncode == 0, done.stderr
        reply = json.loads(done.stdout)
        assert reply["object"] == "chat.completion" and len(reply["bench"]["seats"]) == 2


def test_a80_collection_save_merges_and_rm_needs_a_confirmation(url: str) -> None:
    assert (
        bench(
            "collection",
            "save",
            "cli-merge",
            "--members",
            "cli-a,cli-b",
            "--description",
            "kept",
            "--tags",
            "one,two",
            "--reply",
            "merged",
            url=url,
        ).returncode
        == 0
    )
    done = bench("collection", "save", "cli-merge", "--add", "cli-c", "--remove", "cli-a", url=url)
    assert done.returncode == 0, done.stderr
    shown = json.loads(bench("--json", "collection", "show", "cli-merge", url=url).stdout)
    assert (shown["members"], shown["description"], shown["tags"], shown["reply"]) == (
        ["cli-b", "cli-c"],
        "kept",
        ["one", "two"],
        "merged",
    )
    refused = bench("collection", "rm", "cli-merge", url=url)
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert bench("collection", "rm", "cli-merge", "--yes", url=url).returncode == 0
    assert bench("collection", "show", "cli-merge", url=url).returncode == 1


def test_a_key_is_printed_once_to_stdout_only(url: str) -> None:
    made = bench("key", "create", "cli-app", "--collections", "cli-pair", "--rpm", "5", url=url)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert re.fullmatch(r"bwk_[A-Za-z0-9_-]{43}", key) and "shown once" in made.stderr
    listed = bench("--json", "keys", url=url)
    assert key not in listed.stdout and "cli-app" in listed.stdout
    assert bench("key", "revoke", "cli-app", url=url).returncode == 2
    assert bench("key", "revoke", "cli-app", "-y", url=url).returncode == 0


@pytest.mark.parametrize(
    "args",
    [
        ["status"],
        ["models", "--find", "cli-"],
        ["models", "--all"],
        ["collections"],
        ["endpoints"],
        ["keys"],
        ["changes", "--limit", "5"],
        ["settings", "gateway"],
        ["limits", "show"],
        ["endpoint", "test", "fake"],
        ["endpoint", "key", "fake"],
        ["collection", "show", "cli-pair"],
    ],
)
def test_every_read_command_answers(url: str, args: list[str]) -> None:
    done = bench(*args, url=url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


def test_model_commands_change_the_model(url: str) -> None:
    assert bench("model", "add", "cli-d", "--endpoint", "fake", "--ad-hoc", url=url).returncode == 0
    assert bench("model", "rename", "cli-d", "cli-delta", url=url).returncode == 0
    assert bench("model", "role", "cli-delta", "code", url=url).returncode == 0
    assert bench("model", "max-tokens", "cli-delta", "900", url=url).returncode == 0
    assert bench("model", "max-tokens", "cli-delta", "lots", url=url).returncode == 2
    assert bench("model", "retire", "cli-delta", url=url).returncode == 2
    assert bench("model", "retire", "cli-delta", "--reason", "done", "--yes", url=url).returncode == 0
    assert bench("model", "restore", "cli-delta", url=url).returncode == 0
    rows = json.loads(bench("--json", "models", url=url).stdout)["models"]
    delta = next(m for m in rows if m["alias"] == "cli-delta")
    assert (delta["role"], delta["max_tokens"], delta["retired"], delta["ad_hoc"]) == (
        "code",
        900,
        False,
        True,
    )
    assert "cli-d" in json.loads(bench("--json", "models", url=url).stdout)["renamed"]


SIGINT_DEFAULT_EXEC = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                       "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT]); "
                       "os.execv(sys.argv[1], sys.argv[1:])")


def ignored_signals() -> str:
    """The signals this process ignores and blocks (Linux masks, as the kernel reports them)."""
    status = Path("/proc/self/status")
    if not status.exists():
        return "unknown"
    return ", ".join(line for line in status.read_text().splitlines()
                     if line.startswith(("SigIgn:", "SigBlk:")))


def test_ctrl_c_while_seats_think_exits_130(url: str, provider: FakeProvider) -> None:
    provider.reset_requests()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHWARMERS_")}
    env["BENCHWARMERS_URL"] = url
    # Started as a shell starts a foreground command, Ctrl-C at its default: an ignored or blocked SIGINT
    # is inherited through exec. In the full suite the CLI once ran its 20 s seat to the end and exited 0,
    # as a process that ignores or blocks SIGINT would.
    proc = subprocess.Popen(
        [sys.executable, "-c", SIGINT_DEFAULT_EXEC, str(BENCH), "ask", "cli-slow", "take your time"],
        env=env,
        text=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(
            lambda: any("take your time" in json.dumps(r["body"]) for r in provider.requests()
                        if r["body"].get("model") == "cli-slow"),
            what="the slow seat being asked this question",
        )
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(30)
        out, err = proc.communicate()
        if code != 130:  # pytest.fail, not an assertion: pytest cuts an assertion's message short
            pytest.fail(f"exit {code}, not 130; this test process's {ignored_signals()}; "
                        f"stdout:\n{out}\nstderr:\n{err}\nprovider saw:\n"
                        + "\n".join(f"{r['at']:.3f} {r['body'].get('model')}" for r in provider.requests()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
