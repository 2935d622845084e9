"""The permission matrix says what issue 13 promises: each claim checked against the grants as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared import bus_access, subjects
from shared.bus_access import GRANTS, SERVICES


def matches(pattern: str, subject: str) -> bool:
    """NATS subject matching: `*` is one token, `>` one or more trailing tokens."""
    pat, sub = pattern.split("."), subject.split(".")
    for i, token in enumerate(pat):
        if token == ">":
            return len(sub) > i
        if i >= len(sub) or (token != "*" and token != sub[i]):
            return False
    return len(pat) == len(sub)


def may_publish(role: str, subject: str) -> bool:
    return any(matches(p, subject) for p in GRANTS[role].publish)


def may_subscribe(role: str, subject: str) -> bool:
    return any(matches(p, subject) for p in GRANTS[role].subscribe)


def publishers(subject: str) -> set[str]:
    return {role for role in SERVICES if may_publish(role, subject)}


def subscribers(subject: str) -> set[str]:
    return {role for role in SERVICES if may_subscribe(role, subject)}


@pytest.mark.parametrize(
    ("pattern", "subject", "expected"),
    [("a.*", "a.b", True), ("a.*", "a.b.c", False), ("a.>", "a.b.c", True), ("a.>", "a", False),
     ("a.b", "a.b", True), ("a.*.c", "a.x.c", True), ("a.*.c", "a.x.d", False)],
)
def test_the_matcher_follows_nats_wildcards(pattern: str, subject: str, expected: bool) -> None:
    assert matches(pattern, subject) is expected


def test_only_the_gateway_and_the_prober_ask_callers_to_list_models() -> None:
    assert publishers(subjects.RPC_CALLER_MODELS) == {"gateway", "prober"}
    assert subscribers(subjects.RPC_CALLER_MODELS) == {"caller"}


def test_only_callers_consume_the_work_queue() -> None:
    pull = f"$JS.API.CONSUMER.MSG.NEXT.{subjects.CALLS_STREAM}.{subjects.CALLERS_CONSUMER}"
    assert publishers(pull) == {"caller"}
    assert publishers(f"$JS.ACK.{subjects.CALLS_STREAM}.{subjects.CALLERS_CONSUMER}.1.2.3.4.5") == {"caller"}
    # prober: suite passes; seater: the shape picker (P-4)
    assert publishers(subjects.call_subject("p1.member1")) == {"gateway", "prober", "seater"}


def test_only_the_gateway_and_the_prober_write_config() -> None:
    assert publishers(subjects.CONFIG) == {"gateway", "prober"}


def test_each_fact_has_its_writers() -> None:
    assert publishers(subjects.panel_subject("p1")) == {"gateway", "seater"}
    assert publishers(subjects.seat_subject("p1.member1")) == {"gateway", "caller"}
    assert publishers(subjects.verdict_subject("p1.member1")) == {"ledger"}
    assert publishers(subjects.usage_subject("c")) == {"caller"}
    assert publishers(subjects.limit_subject("c")) == {"caller"}
    assert publishers(subjects.suite_subject("s1.t1")) == {"prober"}
    assert publishers(subjects.route_subject("r1")) == {"gateway"}
    assert publishers(subjects.job_subject("availability")) == {"prober"}


def test_nobody_listens_to_every_event_on_core_nats() -> None:
    assert subscribers(subjects.EVENTS_ALL) == set()
    assert subscribers(subjects.CONFIG) == set()


def test_only_the_ledger_changes_or_nobody_deletes_a_stream() -> None:
    for stream in (subjects.EVENTS_STREAM, subjects.CALLS_STREAM):
        assert publishers(f"$JS.API.STREAM.UPDATE.{stream}") == {"ledger"}
        assert publishers(f"$JS.API.STREAM.DELETE.{stream}") == set()
        assert publishers(f"$JS.API.STREAM.PURGE.{stream}") == set()


def test_limits_and_key_rates_are_written_by_their_owners() -> None:
    assert publishers(f"$KV.{subjects.LIMITS_BUCKET}.openrouter") == {"caller"}
    assert publishers(f"$KV.{subjects.KEY_RATES_BUCKET}.k1") == {"gateway"}
    assert publishers(f"$KV.{subjects.REMINDERS_BUCKET}.s1.p1.member1") == {"gateway"}
    assert publishers(f"$KV.{subjects.IDS_BUCKET}.p1") == {"gateway", "seater", "prober"}
    assert publishers(f"$KV.{subjects.JOBS_BUCKET}.job.perf") == {"prober"}


def test_relays_go_from_callers_to_gateways_and_cancels_back() -> None:
    frame = subjects.relay_subject("gateway-h-1", "tok")
    cancel = subjects.relay_cancel_subject(frame)
    assert (publishers(frame), subscribers(frame)) == ({"caller"}, {"gateway"})
    assert (publishers(cancel), subscribers(cancel)) == ({"gateway"}, {"caller"})


def test_no_role_reads_another_roles_replies() -> None:
    for role in SERVICES:
        others = {r for r in SERVICES if r != role}
        inbox = f"{bus_access.inbox_prefix(role)}.abc.1"
        assert may_subscribe(role, inbox)
        assert not {r for r in others if may_subscribe(r, inbox)}


def test_the_supervisor_only_pings() -> None:
    assert GRANTS[bus_access.SUPERVISOR].publish == (subjects.health_subject("*"),)


def test_the_server_block_has_one_user_per_role_with_its_grant() -> None:
    keys = {role: (f"U{role.upper()}",) for role in bus_access.ROLES}
    users = bus_access.authorization(keys)["users"]
    assert isinstance(users, list)
    assert [u["nkey"] for u in users] == [key for (key,) in keys.values()]
    gateway = users[0]["permissions"]
    assert subjects.RPC_CALLER_MODELS in gateway["publish"]["allow"]
    assert gateway["allow_responses"] is True
    assert "allow_responses" not in users[-1]["permissions"]  # admin: full access, no reply grant needed


def test_a_role_in_rotation_has_both_keys_with_the_same_grant() -> None:
    users = bus_access.authorization({"caller": ("UNEW", "UOLD"), "ledger": ("ULEDGER",)})["users"]
    assert isinstance(users, list)
    assert [u["nkey"] for u in users] == ["UNEW", "UOLD", "ULEDGER"]
    assert users[0]["permissions"] == users[1]["permissions"] == bus_access.permissions("caller")


def test_the_architecture_doc_shows_the_matrix_the_server_enforces() -> None:
    doc = (Path(__file__).resolve().parents[3] / "docs" / "architecture.md").read_text()
    assert bus_access.matrix_markdown() in doc
