"""MCP against a whole stack through the official `mcp` SDK's own client (MCP-1..MCP-4, A-73..A-77), over
Streamable HTTP on either of two gateway replicas and over stdio through `bench mcp`: initialize, the four
tools, a panel with progress as seats land, verdicts, reminders of owed verdicts given once per session
whichever replica the hook reaches, and key scope refused as an `isError` result. Gateway keys are required
here (an admin token is set)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as types
import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from cli.stack import Stack
from shared.mcp_tools import TOOL_NAMES
from shared.natsserver import free_port
from tests.e2e.conftest import running
from tests.fakes.provider import FakeProvider

TOKEN = "admin-token-for-mcp-0123"
MEMBERS = ("mcp-one", "mcp-two")
SLOW_MS = 1200
KEEPALIVE_S = 0.4  # a waiting notification every 0.4 s without news: two or more while the slow seat thinks

Connect = Callable[[], AbstractAsyncContextManager[ClientSession]]


@dataclass
class Rig:
    stack: Stack
    urls: list[str]  # each replica's root
    key: str  # may call every collection
    scoped: str  # may call only bench/mcp-other
    home: Path

    def http(self, replica: int = 0, key: str | None = None) -> Connect:
        return lambda: http_session(f"{self.urls[replica]}/mcp", key or self.key)

    def stdio(self, replica: int = 0, key: str | None = None) -> Connect:
        return lambda: stdio_session(self.urls[replica], key or self.key, self.home)


@asynccontextmanager
async def http_session(url: str, key: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"},
                           timeout=httpx2.Timeout(30, read=120)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        yield session


@asynccontextmanager
async def stdio_session(url: str, key: str, home: Path) -> AsyncIterator[ClientSession]:
    env = {"PATH": os.environ.get("PATH", ""), "BENCHWARMERS_URL": url, "BENCHWARMERS_KEY": key,
           "HOME": str(home)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "cli.main", "mcp"], env=env,
                                   cwd=str(Path.cwd()))
    with (home / "stdio-stderr.log").open("a") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            yield session


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory, provider: FakeProvider) -> Iterator[Rig]:
    home = tmp_path_factory.mktemp("mcp")
    stack = Stack(home=home, port=free_port(), replicas={"gateway": 2},
                  extra_env={"BENCHWARMERS_ADMIN_TOKEN": TOKEN, "BENCH_KEEPALIVE_S": str(KEEPALIVE_S),
                             "BENCHWARMERS_KEY_FAKE": "sk-test-not-a-real-key"})
    with running(stack):
        urls = [f"http://127.0.0.1:{port}" for port in stack.gateway_ports]
        admin = httpx.Client(base_url=urls[0], headers={"authorization": f"Bearer {TOKEN}"}, timeout=60)
        provider.set_model("mcp-one", answer="mcp one says the bug is in parse()")
        provider.set_model("mcp-two", latency_ms=SLOW_MS, answer="mcp two says look at the cache")
        endpoint = {"name": "fake", "base": provider.base_url}
        bodies: list[tuple[str, dict[str, Any]]] = [("/api/endpoint", endpoint)]
        bodies += [("/api/models", {"served": m, "endpoint": "fake", "ad_hoc": True}) for m in MEMBERS]
        bodies += [("/api/collection", {"name": "mcp-core", "members": list(MEMBERS), "description": "two"}),
                   ("/api/collection", {"name": "mcp-other", "members": ["mcp-one"]}),
                   ("/api/collection", {"name": "mcp-route", "members": ["mcp-one"], "reply": "route"})]
        for path, body in bodies:
            assert admin.post(path, json=body).status_code == 200, (path, body)
        keys = [admin.post("/api/gateway-key", json=body).json()["key"]
                for body in ({"name": "mcp-all"}, {"name": "mcp-scoped", "collections": ["mcp-other"]})]
        yield Rig(stack, urls, keys[0], keys[1], home)


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


def texts(result: types.CallToolResult) -> list[str]:
    return [item.text for item in result.content if isinstance(item, types.TextContent)]


async def ask_with_progress(connect: Connect, **arguments: Any) -> tuple[types.CallToolResult, list[str]]:
    heard: list[str] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        heard.append(f"{progress:g}/{total or 0:g} {message}")

    async with connect() as session:
        await session.initialize()
        result = await session.call_tool("ask", arguments, progress_callback=progress)
    return result, heard


TRANSPORTS = ["http", "stdio"]


def connect_for(rig: Rig, transport: str, replica: int = 0, key: str | None = None) -> Connect:
    return rig.http(replica, key) if transport == "http" else rig.stdio(replica, key)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a73_initialize_ping_and_four_tools_with_instructions(rig: Rig, transport: str) -> None:
    async def check() -> tuple[types.InitializeResult, list[str]]:
        async with connect_for(rig, transport)() as session:
            init = await session.initialize()
            await session.send_ping()
            listed = await session.list_tools()
            return init, [tool.name for tool in listed.tools]

    init, names = run(check())
    assert names == list(TOOL_NAMES)
    assert init.server_info.name == "benchwarmers" and init.server_info.title == "Benchwarmers"
    assert init.capabilities.tools is not None
    assert init.instructions and "verdict" in init.instructions and "call id" in init.instructions


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a74_a76_ask_answers_two_items_and_progress_names_the_seats_as_they_land(
    rig: Rig, transport: str
) -> None:
    result, heard = run(ask_with_progress(connect_for(rig, transport), collection="bench/mcp-core",
                                          prompt="where is the bug?"))
    assert not result.is_error, texts(result)
    content, seats_text = texts(result)
    assert "mcp one says the bug is in parse()" in content and "mcp two says look at the cache" in content
    heading, _, raw = seats_text.partition("\n")
    assert heading.startswith("Seats (")
    seats = json.loads(raw)
    assert seats["collection"] == "bench/mcp-core" and seats["panel"].startswith("p")
    assert {s["alias"] for s in seats["seats"]} >= set(MEMBERS)
    assert all("answer" not in s for s in seats["seats"])  # the reply carries them
    # Progress: seated first, then each seat by name as it lands; the slow one last.
    assert heard[0].startswith("0/") and "waiting for their answers" in heard[0], heard
    landed = [said for said in heard[1:] if "still waiting for" not in said]
    assert len(landed) == len(seats["seats"]), heard
    assert "mcp-one" in landed[0] and "mcp-two" not in landed[0], heard
    assert "mcp-two" in landed[-1] and landed[-1].startswith(f"{len(landed)}/{len(landed)}"), heard
    # Between landings (at least 1.2 s, split in two by the quick seat: one gap is over 0.4 s), keep-alive
    # notifications name the seats still awaited, the slow one among them; progress only ever rises.
    waiting = [said for said in heard[1:] if "still waiting for" in said]
    assert waiting and all("mcp-two" in said.split("still waiting for")[1] for said in waiting), heard
    values = [float(said.split("/")[0]) for said in heard]
    assert values == sorted(values) and len(set(values)) == len(values), heard


def test_a_collection_saved_for_route_mode_is_asked_as_a_panel(rig: Rig) -> None:
    result, heard = run(ask_with_progress(rig.http(), collection="bench/mcp-route", prompt="one opinion"))
    assert not result.is_error, texts(result)
    assert "mcp one says" in texts(result)[0]
    assert [said.split("/")[0] for said in heard if "still waiting for" not in said] == ["0", "1"], heard


def test_merged_ask_keeps_each_answer_in_the_seats(rig: Rig) -> None:
    result, _ = run(ask_with_progress(rig.http(), collection="mcp-core", prompt="merge please", merged=True))
    assert not result.is_error, texts(result)
    seats = json.loads(texts(result)[1].partition("\n")[2])
    assert all("answer" in s for s in seats["seats"])


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a74_a_refused_key_scope_is_an_is_error_result_with_the_status(rig: Rig, transport: str) -> None:
    result, heard = run(ask_with_progress(connect_for(rig, transport, key=rig.scoped), collection="mcp-core",
                                          prompt="not mine"))
    assert result.is_error and heard == []
    (said,) = texts(result)
    assert said.startswith("Benchwarmers refused ask (403)") and "bench/mcp-other" in said


def test_tool_failures_and_bad_arguments_are_is_error_results(rig: Rig) -> None:
    async def check() -> list[types.CallToolResult]:
        async with rig.http()() as session:
            await session.initialize()
            return [
                await session.call_tool("ask", {"collection": "no-such", "prompt": "hi"}),
                await session.call_tool("ask", {"collection": "mcp-core", "prompt": 42}),
                await session.call_tool("ask", {"collection": "mcp-core", "prompt": "x", "merged": "yes"}),
                await session.call_tool("verdict", {"call": "p20260101-120000-ab12.member1"}),
            ]

    unknown, wrong_type, wrong_merged, no_useful = run(check())
    assert all(r.is_error for r in (unknown, wrong_type, wrong_merged, no_useful))
    assert texts(unknown)[0].startswith("Benchwarmers refused ask (404)")
    assert '"prompt"' in texts(wrong_type)[0] and '"merged"' in texts(wrong_merged)[0]
    assert '"useful"' in texts(no_useful)[0]


def test_an_unknown_tool_is_a_protocol_error(rig: Rig) -> None:
    async def check() -> MCPError:
        async with rig.http()() as session:
            await session.initialize()
            with pytest.raises(MCPError) as raised:
                await session.call_tool("no_such_tool", {})
            return raised.value

    error = run(check())
    assert error.code == types.INVALID_PARAMS and "no_such_tool" in error.message


def test_list_collections_shows_what_the_key_may_call(rig: Rig) -> None:
    async def listing(key: str) -> list[dict[str, Any]]:
        async with rig.http(key=key)() as session:
            await session.initialize()
            result = await session.call_tool("list_collections", {})
        assert not result.is_error
        rows: list[dict[str, Any]] = json.loads(texts(result)[0])
        return rows

    everything = run(listing(rig.key))
    core = next(row for row in everything if row["name"] == "bench/mcp-core")
    assert core["members"] == list(MEMBERS) and core["description"] == "two" and core["reply"] == "all"
    assert [row["name"] for row in run(listing(rig.scoped))] == ["bench/mcp-other"]


def seat_calls(result: types.CallToolResult) -> list[str]:
    return [seat["call"] for seat in json.loads(texts(result)[1].partition("\n")[2])["seats"]]


def transcript_with(path: Path, calls: list[str]) -> str:
    """A Claude Code-like transcript: the tool result carrying the seats, JSON inside JSON."""
    lines = [{"type": "user", "message": {"content": "find the bug"}},
             {"type": "tool_result", "content": json.dumps({"seats": [{"call": c} for c in calls]})}]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return str(path)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a77_pending_verdicts_reminds_once_per_session_per_seat_on_any_replica(
    rig: Rig, transport: str, tmp_path: Path
) -> None:
    result, _ = run(ask_with_progress(rig.http(), collection="mcp-core", prompt=f"remind me ({transport})"))
    calls = seat_calls(result)
    judged, owed = calls[0], calls[1:]
    transcript = transcript_with(tmp_path / "session.jsonl", calls)
    session_id = f"session-{transport}"

    async def hook(replica: int, **extra: Any) -> str:
        async with connect_for(rig, transport, replica)() as session:
            await session.initialize()
            args = {"session": session_id, "transcript": transcript, "active": False, **extra}
            reply = await session.call_tool("pending_verdicts", args)
        assert not reply.is_error, texts(reply)
        return texts(reply)[0]

    async def flow() -> list[str]:
        async with connect_for(rig, transport)() as session:
            await session.initialize()
            said = await session.call_tool("verdict", {"call": judged, "useful": True, "note": "right",
                                                       "real": ["the bug is in parse()"]})
        assert not said.is_error and texts(said) == [f"Recorded {judged}: useful, 1 real, 0 false."]
        return [await hook(0, active="true"), await hook(0), await hook(1), await hook(0)]

    while_active, first, on_other_replica, again = run(flow())
    assert while_active == ""
    context = json.loads(first)["hookSpecificOutput"]
    assert context["hookEventName"] == "Stop"
    reminder = context["additionalContext"]
    assert all(call in reminder for call in owed) and judged not in reminder
    assert (on_other_replica, again) == ("", "")


def test_two_replicas_answering_the_same_hook_at_once_remind_once(rig: Rig, tmp_path: Path) -> None:
    result, _ = run(ask_with_progress(rig.http(), collection="mcp-core", prompt="race the hook"))
    calls = seat_calls(result)
    transcript = transcript_with(tmp_path / "race.jsonl", calls)

    async def hook(replica: int) -> str:
        async with rig.http(replica)() as session:
            await session.initialize()
            reply = await session.call_tool("pending_verdicts", {"session": "race", "transcript": transcript})
        return texts(reply)[0]

    async def both() -> list[str]:
        return list(await asyncio.gather(hook(0), hook(1), hook(0), hook(1)))

    said = [text for text in run(both()) if text]
    reminded = [call for text in said for call in calls if call in text]
    assert sorted(reminded) == sorted(calls)  # each seat once, across all four answers


def test_a_transcript_that_is_not_a_jsonl_file_is_not_read(rig: Rig, tmp_path: Path) -> None:
    result, _ = run(ask_with_progress(rig.http(), collection="mcp-core", prompt="not a transcript"))
    calls = seat_calls(result)
    secret = tmp_path / "notes.txt"
    secret.write_text(" ".join(calls))
    link = tmp_path / "link.jsonl"
    link.symlink_to(secret)

    async def hook(transcript: str) -> types.CallToolResult:
        async with rig.http()() as session:
            await session.initialize()
            return await session.call_tool("pending_verdicts", {"session": f"s-{transcript}",
                                                                "transcript": transcript})

    for path in (str(secret), str(link), str(tmp_path), "/etc/passwd", "relative.jsonl"):
        reply = run(hook(path))
        assert not reply.is_error and texts(reply) == [""], path


# ---------------------------------------------------------------- the HTTP transport itself

BOTH = {"accept": "application/json, text/event-stream"}


def post(rig: Rig, body: Any, replica: int = 0, key: str | None = "", **headers: str) -> httpx.Response:
    auth = {"authorization": f"Bearer {key or rig.key}"} if key is not None else {}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(f"{rig.urls[replica]}/mcp", content=content, timeout=30,
                      headers={"content-type": "application/json", **BOTH, **auth, **headers})


def sse_message(reply: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message an SSE reply ends with."""
    datas = [line[5:].strip() for line in reply.text.splitlines() if line.startswith("data:")]
    message: dict[str, Any] = json.loads([d for d in datas if d][-1])
    return message


@pytest.mark.parametrize("replica", [0, 1])
def test_a75_notifications_gets_and_bad_json_on_every_replica(rig: Rig, replica: int) -> None:
    note = post(rig, {"jsonrpc": "2.0", "method": "notifications/initialized"}, replica)
    assert (note.status_code, note.content) == (202, b"")
    for path in ("/mcp", "/v1/mcp"):
        got = httpx.get(rig.urls[replica] + path, headers={"authorization": f"Bearer {rig.key}"})
        assert got.status_code == 405 and got.headers["allow"] == "POST", got.text
        assert got.json()["error"]["message"]
    bad = post(rig, b"{not json", replica)
    assert bad.status_code == 400
    assert bad.json()["jsonrpc"] == "2.0" and bad.json()["id"] is None
    assert bad.json()["error"]["code"] == types.PARSE_ERROR


def test_a75_the_guard_and_the_keys_hold_on_mcp(rig: Rig) -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert post(rig, listing, key=None).status_code == 401
    assert post(rig, listing, key="bwk_" + "x" * 43).status_code == 401
    assert post(rig, listing, host="evil.example").status_code == 403
    assert post(rig, listing, origin="https://evil.example").status_code == 403
    assert post(rig, listing, 0, "", **{"content-type": "text/plain"}).status_code == 415
    ok = post(rig, listing, replica=1)
    assert ok.status_code == 200 and len(sse_message(ok)["result"]["tools"]) == 4


def test_a75_a_client_without_event_streams_gets_plain_json(rig: Rig) -> None:
    reply = post(rig, {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, accept="application/json")
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("application/json")
    assert reply.json()["id"] == 7 and len(reply.json()["result"]["tools"]) == 4


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "no/such/method"}, types.METHOD_NOT_FOUND),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope"}},
         types.INVALID_PARAMS),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask", "arguments": 5}},
         types.INVALID_PARAMS),
    ],
)
def test_protocol_faults_are_the_protocols_own_errors(rig: Rig, body: dict[str, Any], code: int) -> None:
    reply = post(rig, body)
    assert reply.status_code == 200, reply.text
    assert sse_message(reply)["error"]["code"] == code


@pytest.mark.parametrize("body", [
    [1, 2], {"jsonrpc": "1.0", "id": 1, "method": "ping"}, {"id": 1}, "hi", 5,
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [1, 2]},  # params not an object
])
def test_malformed_json_rpc_is_a_400_never_a_500(rig: Rig, body: Any) -> None:
    reply = post(rig, body)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["code"] in (types.INVALID_REQUEST, types.INVALID_PARAMS)


def test_stdio_answers_a_ping_while_a_panel_runs(rig: Rig) -> None:
    async def check() -> tuple[float, float]:
        async with rig.stdio()() as session:
            await session.initialize()
            loop = asyncio.get_running_loop()
            started = loop.time()
            asked = {"collection": "mcp-core", "prompt": "ping?"}
            asking = asyncio.ensure_future(session.call_tool("ask", asked))
            await session.send_ping()
            pinged = loop.time() - started
            result = await asking
            assert not result.is_error, texts(result)
            return pinged, loop.time() - started

    pinged, answered = run(check())
    assert pinged < answered and answered >= SLOW_MS / 1000  # the ping did not wait for the slow seat


def test_the_stop_hook_reminds_claude_code_once(rig: Rig, tmp_path: Path) -> None:
    result, _ = run(ask_with_progress(rig.http(), collection="mcp-core", prompt="hook me"))
    calls = seat_calls(result)
    transcript = transcript_with(tmp_path / "hook.jsonl", calls)
    hook_input = json.dumps({"session_id": "hooked", "transcript_path": transcript, "stop_hook_active": False,
                             "hook_event_name": "Stop"})
    env = {**os.environ, "BENCHWARMERS_URL": rig.urls[1], "BENCHWARMERS_KEY": rig.key}

    def hook() -> str:
        done = subprocess.run([sys.executable, "-m", "cli.main", "mcp", "stop-hook"], input=hook_input,
                              capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    first = json.loads(hook())
    assert first["decision"] == "block" and all(call in first["reason"] for call in calls)
    assert hook() == ""


def test_the_sdks_unified_client_on_its_newest_protocol(rig: Rig) -> None:
    """`mcp.Client` probes `server/discover` first and speaks the 2026 per-request protocol when it can."""

    async def check() -> tuple[str, str | None, list[str], types.CallToolResult, list[str]]:
        heard: list[str] = []

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            heard.append(str(message))

        headers = {"Authorization": f"Bearer {rig.key}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http,
            Client(streamable_http_client(f"{rig.urls[1]}/mcp", http_client=http)) as client,
        ):
            names = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("ask", {"collection": "mcp-core", "prompt": "newest"},
                                            progress_callback=progress)
            return client.protocol_version, client.instructions, names, result, heard

    version, instructions, names, result, heard = run(check())
    assert names == list(TOOL_NAMES) and instructions and "verdict" in instructions
    assert not result.is_error, texts(result)
    assert len(texts(result)) == 2 and "mcp two says look at the cache" in texts(result)[0]
    assert version == "2026-07-28"
    assert heard[-1].startswith("2 of 2 seats answered: member1 (mcp-one, ok"), heard
    assert any("waiting for member2 (mcp-two)" in said for said in heard), heard


def test_a_refused_key_on_stdio_is_an_is_error_result_saying_so(rig: Rig) -> None:
    async def check() -> types.CallToolResult:
        async with rig.stdio(key="bwk_" + "x" * 43)() as session:
            await session.initialize()
            return await session.call_tool("list_collections", {})

    result = run(check())
    assert result.is_error
    (said,) = texts(result)
    assert "401" in said and "unknown or revoked" in said and "bwk_" not in said, said
