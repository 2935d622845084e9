"""OpenAI chat completions against a whole stack, through the official `openai` SDK (SPEC A-1..A-12, A-20,
A-25..A-28): a fake provider behind, the stack configured through the admin API, one stack per module."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from cli.stack import Stack
from shared import subjects
from shared.config_state import family
from tests.e2e.conftest import Admin, events_on, logs_on_failure, wait_until
from tests.fakes.provider import FakeProvider

PANEL_RE = r"p\d{8}-\d{6}-[0-9a-f]{4}"
BASE = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
AD_HOC: dict[str, dict[str, Any]] = {
    "broken-kilo": {"behaviour": "error_in_200"},
    "hollow-lima": {"behaviour": "empty"},
    "slow-sierra": {"latency_ms": 1500, "answer": "slow sierra finally answers"},
    "mid-tango": {"latency_ms": 600, "answer": "mid tango answers"},
    "quick-uniform": {"answer": "quick uniform answers"},
    "sleepy-victor": {"latency_ms": 3000, "answer": "sleepy victor wakes up"},
}


@dataclass
class Env:
    stack: Stack
    provider: FakeProvider
    admin: Admin
    client: OpenAI
    http: httpx.Client


@pytest.fixture(scope="module")
def env(stack: Stack, provider: FakeProvider) -> Iterator[Env]:
    for served, settings in AD_HOC.items():
        provider.set_model(served, **settings)
    with logs_on_failure(stack.home):
        admin = Admin(stack.url)
        for served in BASE:
            admin.model(served)
        for served in AD_HOC:
            admin.model(served, ad_hoc=True)
        admin.collection("trio", ["alpha", "bravo", "charlie"], description="three of them", tags=["general"])
        admin.collection("quartet", ["alpha", "bravo", "charlie", "delta"], description="four")
        admin.collection("quintet", ["alpha", "bravo", "charlie", "delta", "echo"], description="five")
        admin.collection(
            "mixed", ["alpha", "broken-kilo", "hollow-lima", "bravo", "charlie"], description="mixed"
        )
        admin.collection("order", ["slow-sierra", "mid-tango", "quick-uniform"], description="finish order")
        admin.collection("sleepy", ["sleepy-victor"], description="slow to answer")
        client = OpenAI(base_url=stack.url + "/v1", api_key="unused", max_retries=0, timeout=60)
        with httpx.Client(base_url=stack.url, timeout=60) as http:
            yield Env(stack, provider, admin, client, http)


def ask(env: Env, model: str, prompt: str = "Why is the sky blue?", **extra: Any) -> Any:
    return env.client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": prompt}], **extra
    )


def bench_of(completion: Any) -> dict[str, Any]:
    bench: dict[str, Any] = completion.model_extra["bench"]
    return bench


def verdict(env: Env, body: dict[str, Any]) -> httpx.Response:
    return env.http.post("/bench/verdict", json=body)


def pending(env: Env, calls: list[str]) -> list[str]:
    reply = env.http.post("/bench/pending", json={"calls": calls})
    assert reply.status_code == 200, reply.text
    result: list[str] = reply.json()["pending"]
    return result


# ---------------------------------------------------------------- A-1 .. A-6


def test_a1_a2_a3_a_panel_answers_with_every_seat_and_a_bench_object(env: Env) -> None:
    completion = ask(env, "bench/trio")
    assert re.fullmatch(r"chatcmpl-[0-9a-f]{24}", completion.id)
    assert completion.object == "chat.completion"
    assert completion.model == "bench/trio"
    assert completion.usage is None  # no usage in panel mode
    assert completion.choices[0].finish_reason == "stop"
    content = completion.choices[0].message.content
    bench = bench_of(completion)
    assert set(bench) == {"panel", "collection", "shape", "shape_by", "seats", "verdict"}
    assert re.fullmatch(PANEL_RE, bench["panel"])
    assert bench["collection"] == "bench/trio"
    assert bench["verdict"].startswith("POST /bench/verdict")
    calls = [s["call"] for s in bench["seats"]]
    panel = bench["panel"]
    assert calls == [
        f"{panel}.member1",
        f"{panel}.member2",
        f"{panel}.member3",
        f"{panel}.explorer",
        f"{panel}.explorer2",
    ]
    assert [s["seat"] for s in bench["seats"]] == ["member", "member", "member", "explorer", "explorer 2"]
    assert [s["alias"] for s in bench["seats"][:3]] == ["alpha", "bravo", "charlie"]
    for seat in bench["seats"]:
        assert set(seat) == {"call", "seat", "alias", "status", "seconds", "answer", "error"}
        assert f"`{seat['call']}`" in content
        assert seat["status"] == "ok"
        assert seat["answer"] == f"{seat['alias']} says: Why is the sky blue?"
    assert content.startswith(f"Bench bench/trio {panel} · 3 members + 2 explorers · explorer shape ")


def test_a5_no_model_or_an_unknown_one_lists_the_collections(env: Env) -> None:
    with pytest.raises(openai.BadRequestError) as no_model:
        ask(env, "")
    with pytest.raises(openai.NotFoundError) as unknown:
        ask(env, "bench/nope")
    for error in (no_model.value, unknown.value):
        message = error.body["message"] if isinstance(error.body, dict) else str(error)
        assert "- bench/trio: three of them [general]" in message
        assert "- bench/quartet: four" in message
        names = re.findall(r"^- bench/([a-z0-9-]+):", message, flags=re.M)
        assert names == sorted(names)


@pytest.mark.parametrize(
    ("name", "members", "explorers"), [("trio", 3, 2), ("quartet", 4, 1), ("quintet", 5, 0)]
)
def test_a6_explorer_seats_follow_the_member_count(
    env: Env, name: str, members: int, explorers: int
) -> None:
    bench = bench_of(ask(env, f"bench/{name}"))
    labels = [s["seat"] for s in bench["seats"]]
    assert labels.count("member") == members
    assert len(labels) - members == explorers


# ---------------------------------------------------------------- A-7, A-8 (explorers, seen from outside)


def test_a7_explorers_are_never_members_their_family_or_ad_hoc(env: Env) -> None:
    twin = env.admin.model("vendor/alpha")  # same family as the member `alpha`
    assert twin == "alpha-fake"
    member_families = {family(m) for m in ("alpha", "bravo", "charlie")}
    seen: set[str] = set()
    for _ in range(4):
        bench = bench_of(ask(env, "bench/trio", prompt="rotate"))
        explorers = [s["alias"] for s in bench["seats"] if s["seat"] != "member"]
        assert len(explorers) == 2
        seen.update(explorers)
    assert not seen & {"alpha", "bravo", "charlie", twin}
    assert not seen & set(AD_HOC)
    served = {"alpha-fake": "vendor/alpha"}
    assert not {family(served.get(a, a)) for a in seen} & member_families


def test_a8_the_model_never_used_sits_first_then_the_one_used_longest_ago(env: Env) -> None:
    env.admin.model("papa")
    env.admin.model("quebec")  # registered last, never seated: only its staleness can put it first
    env.admin.collection("warm-a", ["alpha", "bravo", "charlie", "delta", "echo"])
    env.admin.collection("warm-b", ["foxtrot", "golf", "papa", "echo", "alpha"])
    for name in ("warm-a", "warm-b"):  # five members, no explorer chair: seats everyone but quebec
        assert all(s["seat"] == "member" for s in bench_of(ask(env, f"bench/{name}"))["seats"])
    first = [s["alias"] for s in bench_of(ask(env, "bench/quartet"))["seats"] if s["seat"] == "explorer"]
    assert first == ["quebec"]
    second = [s["alias"] for s in bench_of(ask(env, "bench/quartet"))["seats"] if s["seat"] == "explorer"]
    assert len(second) == 1 and second != ["quebec"]


# ---------------------------------------------------------------- .. A-12


@pytest.fixture(scope="module")
def mixed_panel(env: Env) -> dict[str, Any]:
    return bench_of(ask(env, "bench/mixed", prompt="mixed bag"))


def test_a4_sections_in_seat_order_with_failed_and_empty_seats_shown(env: Env) -> None:
    completion = ask(env, "bench/order", prompt="who is first?")
    content = completion.choices[0].message.content
    bench = bench_of(completion)
    positions = [content.index(f"`{s['call']}`") for s in bench["seats"]]
    assert positions == sorted(positions)  # seat order although slow-sierra (member1) finished last
    assert bench["seats"][0]["alias"] == "slow-sierra"

    mixed = ask(env, "bench/mixed", prompt="mixed again")
    text = mixed.choices[0].message.content
    seats = {s["alias"]: s for s in bench_of(mixed)["seats"]}
    assert seats["broken-kilo"]["status"] == "error" and seats["broken-kilo"]["error"]
    assert seats["hollow-lima"]["status"] == "empty"
    broken = text[text.index("## member — broken-kilo") :]
    assert broken.split("\n\n", 2)[1].startswith("_error: ")
    hollow = text[text.index("## member — hollow-lima") :]
    assert hollow.split("\n\n", 2)[1].startswith("_empty reply — usually a token budget, not incapacity_")
    positions = [text.index(f"`{s['call']}`") for s in bench_of(mixed)["seats"]]
    assert positions == sorted(positions)


def test_a9_answered_seats_are_pending_until_judged(env: Env, mixed_panel: dict[str, Any]) -> None:
    calls = [s["call"] for s in mixed_panel["seats"]]
    errored = {s["call"] for s in mixed_panel["seats"] if s["status"] == "error"}
    assert errored  # broken-kilo
    assert pending(env, calls) == [c for c in calls if c not in errored]
    judged = calls[0]
    assert verdict(env, {"call": judged, "useful": True}).status_code == 200
    assert pending(env, calls) == [c for c in calls if c not in errored and c != judged]


def test_a10_a_verdict_is_recorded_once(env: Env, mixed_panel: dict[str, Any]) -> None:
    call = next(s["call"] for s in mixed_panel["seats"] if s["alias"] == "bravo")
    body = {"call": call, "useful": True, "note": "checked against the docs", "real": ["the sky"]}
    first = verdict(env, body)
    assert first.status_code == 200, first.text
    assert first.json()["ok"] is True and first.json()["recorded"]
    assert env.stack.nats_url
    stored = events_on(env.stack, subjects.verdict_subject(call))
    assert stored[0] == 1
    again = verdict(env, body)
    assert again.status_code == 200 and again.json()["ok"] is True
    assert events_on(env.stack, subjects.verdict_subject(call)) == stored


def test_a11_bad_verdicts_are_refused(env: Env, mixed_panel: dict[str, Any]) -> None:
    call = mixed_panel["seats"][0]["call"]
    for useful in ("yes", 1, None):
        reply = verdict(env, {"call": call, "useful": useful})
        assert reply.status_code == 400
        assert reply.json() == {
            "error": {"message": '"useful" must be true or false', "type": "bench_gateway", "code": 400}
        }
    assert verdict(env, {"call": call, "useful": True, "real": "one claim"}).status_code == 400
    unknown = verdict(env, {"call": "p20200101-000000-0000.member1", "useful": True})
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == 404


def test_a12_the_record_counts_only_judged_seats_of_the_collection(env: Env) -> None:
    env.admin.collection("rec", ["delta", "echo"], description="record")
    seats = bench_of(ask(env, "bench/rec", prompt="record me"))["seats"]
    delta, echo = seats[0], seats[1]
    assert verdict(env, {"call": delta["call"], "useful": True}).status_code == 200
    assert verdict(env, {"call": echo["call"], "useful": False}).status_code == 200
    other = bench_of(ask(env, "bench/quartet", prompt="not in the record"))["seats"]
    delta_elsewhere = next(s for s in other if s["alias"] == "delta")
    assert verdict(env, {"call": delta_elsewhere["call"], "useful": False}).status_code == 200

    reply = env.http.get("/bench/record", params={"collection": "bench/rec"})
    assert reply.status_code == 200, reply.text
    record = reply.json()
    assert record["collection"] == "bench/rec"
    aliases = record["aliases"]
    assert (aliases["delta"]["useful"], aliases["delta"]["notUseful"], aliases["delta"]["judged"]) == (
        1,
        0,
        1,
    )
    assert (aliases["echo"]["useful"], aliases["echo"]["notUseful"], aliases["echo"]["judged"]) == (0, 1, 1)
    for alias, counts in aliases.items():  # the unjudged explorers count for nothing
        if alias not in ("delta", "echo"):
            assert counts["judged"] == 0
    missing = env.http.get("/bench/record")
    assert missing.status_code == 400
    assert "collection" in missing.json()["error"]["message"]


# ----------------------------------------------------------------


def test_a20_tools_are_refused_naming_route_mode_and_an_empty_list_is_served(env: Env) -> None:
    tool = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
    with pytest.raises(openai.BadRequestError) as refused:
        ask(env, "bench/quintet", tools=[tool])
    assert "bench/quintet:route" in str(refused.value)
    served = env.http.post(
        "/v1/chat/completions",
        json={"model": "bench/quintet", "tools": [], "messages": [{"role": "user", "content": "no tools"}]},
    )
    assert served.status_code == 200


def test_a25_every_collection_is_listed_three_times(env: Env) -> None:
    rows = {m.id: m.model_extra or {} for m in env.client.models.list().data}
    assert {"bench/trio", "bench/trio:merged", "bench/trio:route"} <= set(rows)
    assert all(
        not i.startswith("bench/trio:") or i in ("bench/trio:merged", "bench/trio:route") for i in rows
    )
    trio = rows["bench/trio"]
    assert (trio["description"], trio["tags"], trio["members"]) == (
        "three of them",
        ["general"],
        ["alpha", "bravo", "charlie"],
    )
    assert (trio["explorers"], trio["reply"]) == (2, "all")
    assert (rows["bench/trio:merged"]["reply"], rows["bench/trio:route"]["reply"]) == ("merged", "route")
    assert set(trio["together"]) >= {"context_window", "context_unknown", "capabilities", "connections"}
    assert trio["together"]["connections"] == ["fake"]


# ---------------------------------------------------------------- streaming


def test_a27_streamed_sections_come_in_finish_order(env: Env) -> None:
    stream = env.client.chat.completions.create(
        model="bench/order", stream=True, messages=[{"role": "user", "content": "who is first?"}]
    )
    chunks = list(stream)
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    final = chunks[-1]
    assert final.choices[0].finish_reason == "stop"
    bench = bench_of(final)
    assert {c.id for c in chunks} == {chunks[0].id} and {c.model for c in chunks} == {"bench/order"}
    text = "".join(pieces)
    seats = bench["seats"]
    by_call = {s["call"]: s for s in seats}
    head, footer = pieces[0], pieces[-1]
    assert head.startswith(f"Bench bench/order {bench['panel']} · 3 members + 2 explorers")
    assert footer.startswith("\n---\n")
    sections = pieces[1:-1]
    assert len(sections) == len(seats)
    streamed_calls = [re.search(r"`([^`]+)`", s).group(1) for s in sections]  # type: ignore[union-attr]
    assert sorted(streamed_calls) == sorted(by_call)
    assert streamed_calls[-1] == f"{bench['panel']}.member1"  # slow-sierra, first seat, finished last
    assert streamed_calls[-2] == f"{bench['panel']}.member2"  # mid-tango
    assert streamed_calls != [s["call"] for s in seats]
    for call, section in zip(streamed_calls, sections, strict=True):
        seat = by_call[call]
        assert section == (
            f"\n## {seat['seat']} — {seat['alias']}\n`{call}` · {seat['status']} · "
            f"{seat['seconds']:.1f}s\n\n{seat['answer']}\n"
        )
    assert text == head + "".join(sections) + footer


def test_a26_a28_a_slow_panel_gets_its_200_at_once_and_keepalives_while_it_thinks(env: Env) -> None:
    body = {"model": "bench/sleepy", "stream": True, "messages": [{"role": "user", "content": "wake up"}]}
    started = time.monotonic()
    with env.http.stream("POST", "/v1/chat/completions", json=body) as reply:
        status_after = time.monotonic() - started
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        raw = "".join(reply.iter_text())
    assert status_after < 3.0  # the seat takes 3 s: the 200 did not wait for it
    frames = [f for f in raw.split("\n\n") if f]
    assert frames[-1] == "data: [DONE]"
    data = [json.loads(f[len("data: ") :]) for f in frames[:-1] if f.startswith("data: ")]
    assert data[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert data[1]["choices"][0]["delta"]["content"].startswith("Bench bench/sleepy")
    keepalives = [i for i, f in enumerate(frames) if f == ": keep-alive"]
    assert keepalives, "no keep-alive while the seat was thinking"
    sleepy_at = next(i for i, f in enumerate(frames) if "sleepy victor wakes up" in f)
    assert any(i < sleepy_at for i in keepalives)
    assert data[-1]["choices"][0]["finish_reason"] == "stop" and "bench" in data[-1]


def test_a_streamed_refusal_keeps_its_status(env: Env) -> None:
    with pytest.raises(openai.NotFoundError):
        list(
            env.client.chat.completions.create(
                model="bench/nope", stream=True, messages=[{"role": "user", "content": "x"}]
            )
        )


def test_s7_a_client_that_hangs_up_stops_nothing(env: Env) -> None:
    body = {"model": "bench/sleepy", "stream": True, "messages": [{"role": "user", "content": "hang up"}]}
    panel = ""
    with env.http.stream("POST", "/v1/chat/completions", json=body) as reply:
        for line in reply.iter_lines():
            found = re.search(PANEL_RE, line)
            if found:
                panel = found.group(0)
                break
    assert panel  # the heading came, then this client hung up while the seat was still thinking
    wait_until(
        lambda: events_on(env.stack, subjects.panel_subject(panel))[0] == 2, what="the panel's log line"
    )
    assert events_on(env.stack, subjects.seat_subject(f"{panel}.member1"))[0] == 1
