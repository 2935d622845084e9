"""Silent swaps (SPEC U-3): a reply naming another model than the one registered. Pure.

Names differ harmlessly by vendor prefix, `:free`-style tags, case, `.`/`_` against `-`, and date or
version tails (`-2024-08-06`, `-20241022`, `-001`, `-latest`, `-preview-05-06`); anything else is a swap.
"""

from __future__ import annotations

import re

TAIL_RE = re.compile(
    r"[-_@.](?:\d{4}-?\d{2}-?\d{2}|\d{2}-\d{2}|\d{3,4}|v\d+(?:\.\d+)*|latest|preview|exp|experimental)$"
)


def base_name(model: str) -> str:
    name = model.strip().lower().rsplit("/", 1)[-1].split(":", 1)[0].replace("_", "-")
    while True:
        shorter = TAIL_RE.sub("", name)
        if shorter == name or not shorter:
            return name.replace(".", "-")
        name = shorter


def is_swap(served: str, replied: str) -> bool:
    """True when the reply named a model and it is not the served one."""
    return bool(replied.strip()) and base_name(replied) != base_name(served)
