"""Every behaviour id the repository cites (P-5, RM-6, SEC-2, H-G10, L-2a, A-72, …) is explained in
docs/behaviour.md, so nobody needs a document outside the repository to read a comment or a test name."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BEHAVIOUR = ROOT / "docs" / "behaviour.md"

# The id families behaviour.md groups entries by. `H-G`/`H-D` take their number without a dash (H-G10).
FAMILIES = ("C", "P", "H", "S", "X", "RM", "L", "U", "HL", "O", "T", "CLI", "MCP", "SEC", "CAT", "K", "A")
SPEC_ID = re.compile(r"\b(H-[GD]\d{1,2}|(?:" + "|".join(FAMILIES) + r")-\d{1,3}[a-z]?)\b")
# An entry is a list item whose bold title starts with its id: `- **P-5 Size check.** …`.
ENTRY = re.compile(r"^- \*\*" + SPEC_ID.pattern, re.MULTILINE)
# Strings that look like an id but are not one (the NIST curve in deploy/k8s/README.md's openssl lines).
NOT_IDS = {"P-256"}
CITING = (".py", ".md", ".yml", ".yaml", ".toml")
SKIPPED_DIRS = {"__pycache__", "node_modules"}


def citing_files() -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        found += [Path(folder) / f for f in files if f.endswith(CITING)]
    return [p for p in found if p != Path(__file__).resolve()]


def cited_ids() -> dict[str, set[str]]:
    """Each cited id → the repository paths citing it."""
    cited: dict[str, set[str]] = {}
    for path in citing_files():
        for found in SPEC_ID.findall(path.read_text(encoding="utf-8", errors="replace")):
            if found not in NOT_IDS:
                cited.setdefault(found, set()).add(str(path.relative_to(ROOT)))
    return cited


def explained_ids() -> set[str]:
    return set(ENTRY.findall(BEHAVIOUR.read_text(encoding="utf-8")))


def test_every_cited_spec_id_has_an_entry_in_behaviour_md() -> None:
    explained = explained_ids()
    missing = {i: sorted(paths)[:3] for i, paths in cited_ids().items() if i not in explained}
    assert not missing, (
        "cited but not explained in docs/behaviour.md (add an entry `- **<id> <title>.** …` to its family): "
        + "; ".join(f"{i} (in {', '.join(paths)})" for i, paths in sorted(missing.items()))
    )


def test_the_scan_sees_the_code_and_each_entry_is_written_once() -> None:
    cited = cited_ids()
    # The scan reaches code, tests and docs: a broken walk would pass the test above vacuously.
    assert {"P-5", "RM-6", "SEC-2", "H-G10", "L-2a", "A-72"} <= cited.keys()
    assert any(p.startswith("services/") for p in cited["P-5"])
    entries = ENTRY.findall(BEHAVIOUR.read_text(encoding="utf-8"))
    twice = sorted({i for i in entries if entries.count(i) > 1})
    assert not twice, f"docs/behaviour.md explains these ids more than once: {twice}"
