"""CAT-2's name matching: feeds, endpoints and providers spell one model many ways. Pure."""

from __future__ import annotations

import re

REGION_PREFIXES = ("llm7.", "us.", "eu.", "apac.", "global.")
TAILS = (
    re.compile(r"@.*$"),  # `model@2024-05-13`, `model@default`
    re.compile(r"-v\d+:\d+$"),  # Bedrock's `-v1:0`
    re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|\d{4})$"),  # dates: 20240620, 2024-06-20, 0528
    re.compile(r"-latest$"),
    re.compile(r"-(high|medium|low|minimal)$"),
)


def without_free(model_id: str) -> str:
    return model_id.removesuffix(":free")


def normalise(model_id: str) -> str:
    """Last path segment, lower case, no `:free`, no region prefix, no version or date tails."""
    name = without_free(model_id.strip().rsplit("/", 1)[-1].lower())
    for prefix in REGION_PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    changed = True
    while changed:
        changed = False
        for tail in TAILS:
            shorter = tail.sub("", name)
            if shorter != name and shorter:
                name, changed = shorter, True
    return name
