"""HL-2 and HL-7 in the ledger: a probe's seat completion is also one `probes` row (answered, failure
class, throughput), and a job's run one `job_runs` row; folded twice, they stay one row each."""

from __future__ import annotations

from datetime import UTC, datetime

from services.ledger.fold import fold_batch
from shared.events import JobRan, SeatCompleted
from shared.scheduled_jobs import JobName

T0 = datetime(2026, 1, 5, 4, 0, 3, tzinfo=UTC)
RUN = "pr20260105-040000-availability"


def probe(call: str, status: str, error: str = "", tokens_out: int = 0) -> SeatCompleted:
    return SeatCompleted(id=f"seat:{RUN}.{call}", at=T0, call=f"{RUN}.{call}", panel=RUN, seat="probe tiny",
                         alias=call, served=f"v/{call}", endpoint="e", connection="e", status=status,
                         seconds=2.0, error=error, answer="ready" if status == "ok" else "", purpose="probe",
                         task="availability", tokens_out=tokens_out,
                         first_token_s=0.4 if status == "ok" else None)


def test_probe_completions_become_probe_rows_with_their_failure_class() -> None:
    ok = probe("t1", "ok", tokens_out=8)
    gone = probe("t2", "error", error='Error: Error code: 404 - {"error": "model does not exist"}')
    rows = fold_batch([(1, ok), (2, gone), (3, ok)])
    found = [(r.alias, r.job, r.kind, r.answered, r.failure, r.first_token_s, r.tokens_per_s)
             for r in rows.probes.values()]
    assert found == [
        ("t1", "availability", "probe tiny", True, None, 0.4, 4.0),
        ("t2", "availability", "probe tiny", False, "structural", None, None),
    ]
    assert rows.seats[ok.call].first_token_s == 0.4
    assert rows.seats[gone.call].failure == "structural"


def test_a_panel_seat_is_no_probe() -> None:
    seat = probe("m", "ok").model_copy(update={"purpose": "panel"})
    assert fold_batch([(1, seat)]).probes == {}


def test_a_job_run_is_one_row() -> None:
    ran = JobRan(id=f"job:availability:{T0.isoformat()}", job=JobName.AVAILABILITY, due=T0, mode="run",
                 instance="p1", started=T0, outcome="done", summary="3 calls: 3 answered", took_over=True)
    rows = fold_batch([(4, ran), (5, ran)])
    assert [(r.job, r.outcome, r.took_over, r.summary) for r in rows.job_runs.values()] == [
        ("availability", "done", True, "3 calls: 3 answered")]
