"""The review suite through the whole stack (T-2..T-6, RM-3): the shipped starter pack copied into the data
folder, passes asked over the admin API, answered by scripted fake models through the callers, and the
scores read back from the ledger and the seater's ranking."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import httpx

from cli.stack import Stack
from tests.e2e.conftest import Admin, wait_until
from tests.fakes.provider import FakeProvider

STARTER = Path(__file__).resolve().parents[2] / "suite" / "starter"
BUG, CONTROL, REVIEW = "seed-common-url-kind-6", "seed-common-url-kind-6-control", "review-shared-window-put"
PLANTED = 'if scheme != "data":'  # the bug's line; the control has `==`
WHY = "\nThe data-URL branch is taken for every other scheme, so http URLs are described as data URLs."
RACE = "There is a race: two callers read the same window, both see room, both put, and the limit is passed."


def run(stack: Stack, **body: Any) -> dict[str, Any]:
    reply = httpx.post(f"{stack.url}/api/suite/run", json=body, timeout=120)
    assert reply.status_code == 200, reply.text
    data: dict[str, Any] = reply.json()
    return data


def get(stack: Stack, path: str) -> dict[str, Any]:
    reply = httpx.get(f"{stack.url}{path}", timeout=30)
    assert reply.status_code == 200, reply.text
    data: dict[str, Any] = reply.json()
    return data


def test_starter_tasks_scored_end_to_end_and_the_ranking_follows(
    stack: Stack, provider: FakeProvider
) -> None:
    shutil.copytree(STARTER, stack.home / "suite" / "tasks", dirs_exist_ok=True)
    provider.set_model("suite-e2e-finder", answers={PLANTED: f"FAULT: line 6{WHY}", "kv.put(": RACE},
                       answer=f"NO FAULT{WHY}")
    provider.set_model("suite-e2e-alarmist", answer=f"FAULT: line 6{WHY}")
    admin = Admin(stack.url)
    finder = admin.model("suite-e2e-finder", ad_hoc=True)
    alarmist = admin.model("suite-e2e-alarmist", ad_hoc=True)
    admin.collection("suite-e2e", [alarmist, finder], reply="route")

    scored = {}
    for alias in (finder, alarmist):
        for task in (BUG, CONTROL, REVIEW):
            [result] = run(stack, model=alias, task=task)["results"]
            scored[(alias, task)] = (result["kind"], result["found"], result["wrong"])
    assert scored == {
        (finder, BUG): ("answered", ["FAULT: line 6"], ""),
        (finder, CONTROL): ("answered", ["NO FAULT"], ""),
        (finder, REVIEW): ("answered", ["the read-then-put race between callers"], ""),
        (alarmist, BUG): ("answered", ["FAULT: line 6"], ""),
        (alarmist, CONTROL): ("answered", [], "false alarm"),
        (alarmist, REVIEW): ("answered", [], ""),
    }

    def results_in() -> bool:
        models = get(stack, "/api/suite/results")["models"]
        return {m["alias"] for m in models} >= {finder, alarmist}

    wait_until(results_in, what="the ledger folding the suite answers")
    models = {m["alias"]: m for m in get(stack, "/api/suite/results")["models"]}
    summary = {a: (m["found"], m["of"], m["confidently_wrong"]) for a, m in models.items()}
    assert (summary[finder], summary[alarmist]) == ((1, 1, 0), (0, 1, 1))
    wrong = get(stack, f"/api/suite/results?alias={alarmist}")["wrong"]
    assert [(w["task"], w["wrong"]) for w in wrong] == [(CONTROL, "false alarm")]

    # The finder's one verified finding puts it ahead of the alarmist, listed first in the collection (the
    # seater folds the scores from the stream as they come).
    def ranked() -> list[str]:
        return [line["alias"] for line in get(stack, "/api/collection/rank?name=suite-e2e")["route"]]

    wait_until(lambda: ranked() == [finder, alarmist], what="the seater ranking the finder first")
    rank = get(stack, "/api/collection/rank?name=suite-e2e")
    assert "1 suite findings of 1" in rank["route"][0]["why"]
