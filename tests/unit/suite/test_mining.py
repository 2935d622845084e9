"""T-4's mining: a judged seat's real and false claims become draft claim tasks about the files its prompt
carried, frozen as fixtures."""

from __future__ import annotations

from pathlib import Path

from suite.mining import WHOLE_PROMPT, Judged, files_in, mined
from suite.scoring import score
from suite.task import load_suite, write_tasks

PROMPT = ("Is this safe?\n\n`services/caller/pacer.py`:\n```\ndef take():\n    return 1\n```\n\n"
          "`docs/notes.md`:\n```markdown\nnotes\n```")
WHY = "\nThe function returns a constant, as the attached file shows in full."


def test_the_files_a_prompt_carried_are_found_by_base_name() -> None:
    assert files_in(PROMPT) == {"pacer.py": "def take():\n    return 1\n", "notes.md": "notes\n"}
    assert files_in("no files here") == {}


def test_real_claims_want_true_and_false_claims_want_false() -> None:
    tasks = mined(Judged("p20261203-101010-abcd.member1", "gpt", PROMPT, real=["take returns 1"],
                         false=["take can raise"]))
    real, false = (m.task for m in tasks)
    assert real.id == "mined-p20261203-101010-abcd-member1-1"
    assert false.id == "mined-p20261203-101010-abcd-member1-2"
    assert real.draft and real.shape == "claim" and real.attach == ["notes.md", "pacer.py"]
    assert real.prompt.endswith("Claim: take returns 1") and false.prompt.endswith("Claim: take can raise")
    assert score(real, "VERDICT: TRUE" + WHY).found == ("VERDICT: TRUE",)
    assert score(false, "VERDICT: TRUE" + WHY).invented == ("VERDICT: TRUE",)


def test_a_prompt_without_files_is_frozen_whole(tmp_path: Path) -> None:
    asked = "Is `refresh` re-entrant? It holds no lock."
    [only] = mined(Judged("p1.member1", "gpt", asked, real=["no lock"]))
    assert only.fixtures == {WHOLE_PROMPT: "Is `refresh` re-entrant? It holds no lock."}
    assert write_tasks([(only.task, only.fixtures)], tmp_path) == ([only.task.id], [])
    loaded, refused = load_suite(tmp_path, {})
    assert refused == [] and [t.id for t, _ in loaded] == [only.task.id]
